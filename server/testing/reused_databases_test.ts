import assert from "node:assert/strict";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { backends, freshDatabase, startTestApp, TestClient } from "./app.ts";

/** Every row of every table, every sequence, the catalog's tables and columns, some settings. */
async function everything(db: Db): Promise<unknown> {
  const { rows: relations } = await sql<{ name: string; kind: string }>`
    select relname as name, relkind::text as kind from pg_class
    where relnamespace = 'public'::regnamespace and relkind in ('r', 'S') order by relname`
    .execute(db);
  const state: Record<string, unknown> = {};
  for (const { name, kind } of relations) {
    const { rows } = kind === "S"
      ? await sql`select last_value, is_called from ${sql.table(name)}`.execute(db)
      : await sql`select t::text as row from ${sql.table(name)} t order by 1`.execute(db);
    state[name] = rows;
  }
  const { rows: columns } = await sql`
    select c.relname, a.attname, format_type(a.atttypid, a.atttypmod) as type
    from pg_attribute a join pg_class c on c.oid = a.attrelid
    where c.relnamespace = 'public'::regnamespace and a.attnum > 0 and not a.attisdropped
    order by 1, 2`.execute(db);
  const { rows: settings } = await sql`
    select current_setting('TimeZone') as zone, current_setting('statement_timeout') as timeout`
    .execute(db);
  return { state, columns, settings };
}

for (const backend of backends()) {
  Deno.test(`a test's database, closed, is given to the next test as if made anew [${backend}]`, async () => {
    const made = await freshDatabase(backend, { reuse: false });
    const anew = await everything(made.db);
    await made.close();

    // Writes through the interface: a project, probes, a key; then past it: a seeded table, a
    // sequence, a session setting, a transaction left open.
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    assert.equal((await api.post("/api/v1/projects", { project: "used" })).status, 201);
    const probe = await api.post("/api/v1/projects/used/probes", { url: "https://a.test/" });
    assert.equal(probe.status, 201, probe.text);
    const db = app.database.db;
    await sql`update alert_settings set failure_threshold = 9`.execute(db);
    await sql`select nextval('audit_log_id_seq')`.execute(db);
    if (backend === "pglite") {
      await sql`set timezone = 'Asia/Tokyo'`.execute(db);
      await sql`set statement_timeout = 1234`.execute(db);
    }
    assert.notDeepEqual(await everything(db), anew, "the test changed its database");
    const used = app.database.kind === "pglite" ? app.database.pglite : undefined;
    await app.close();

    const next = await freshDatabase(backend);
    try {
      if (backend === "pglite") assert.equal(next.pglite, used, "the same instance, put back");
      assert.deepEqual(await everything(next.db), anew);
    } finally {
      await next.close();
    }
  });

  Deno.test(`a database whose schema a test changed is not given again [${backend}]`, async () => {
    const first = await freshDatabase(backend);
    const instance = first.pglite;
    await sql`alter table projects add column extra text`.execute(first.db);
    await first.close();
    const next = await freshDatabase(backend);
    try {
      if (backend === "pglite") assert.notEqual(next.pglite, instance);
      const { rows } = await sql`
        select 1 from information_schema.columns
        where table_name = 'projects' and column_name = 'extra'`.execute(next.db);
      assert.equal(rows.length, 0);
    } finally {
      await next.close();
    }
  });

  Deno.test(`a closed handle's database refuses queries, though kept for the next test [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    await sql`select 1`.execute(handle.db);
    await handle.close();
    await assert.rejects(() => sql`select 1`.execute(handle.db));
  });
}
