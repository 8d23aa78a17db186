/**
 * The embedded database in its own thread (`pglite_thread.ts`) behaves as it does in the
 * server's thread, and leaves the server's thread free while a statement runs.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { isUniqueViolation } from "../domain/errors.ts";
import { type Db, openDatabase } from "./database.ts";
import { json } from "./json.ts";
import { migrateToLatest } from "./migrator.ts";
import { EMBEDDED_SETTINGS } from "./pglite_thread.ts";
import { freshDatabase, migratedDump } from "../testing/app.ts";
import { createLogger } from "../base/log.ts";
import { createServiceMetrics } from "../operations/metrics/service.ts";
import { THREAD_YOUNG_GENERATION_MB } from "../base/threads.ts";

/** The settings the database runs with, as `SHOW` gives them, by name. */
async function settings(db: Db): Promise<Record<string, string>> {
  const shown: Record<string, string> = {};
  for (const name of Object.keys(EMBEDDED_SETTINGS)) {
    const { rows } = await sql<Record<string, string>>`show ${sql.raw(name)}`.execute(db);
    shown[name] = rows[0][name];
  }
  return shown;
}

Deno.test("the embedded database in a worker thread", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "probe-pglite-thread-" });
  try {
    // Made from the tests' migrated dump: creating a database takes seconds, loading one not.
    const handle = await openDatabase({
      kind: "pglite",
      dataDir: `${dir}/pgdata`,
      loadDataDir: await migratedDump(),
    });
    assert.equal(handle.pglite, undefined, "a database on disk runs in a worker by default");
    const db = handle.db;
    await migrateToLatest(db);

    await t.step("it runs with the embedded database's memory settings", async () => {
      assert.equal(EMBEDDED_SETTINGS.shared_buffers, "4MB");
      assert.deepEqual(await settings(db), EMBEDDED_SETTINGS);
    });

    await t.step("its young generation is capped; /metrics reads its heap apart", async () => {
      const memory = await handle.threadMemory!();
      assert.equal(memory.youngGenerationMb, THREAD_YOUNG_GENERATION_MB);
      assert.ok(memory.heapUsedBytes > 0, JSON.stringify(memory));
      assert.ok(memory.heapTotalBytes >= memory.heapUsedBytes, JSON.stringify(memory));
      assert.ok(memory.wasmBytes >= 128 * 2 ** 20, JSON.stringify(memory));
      const { registry } = createServiceMetrics({
        db,
        log: createLogger("silent"),
        threadMemory: handle.threadMemory,
      });
      const text = await registry.metrics();
      for (const name of ["heap_used_bytes", "heap_total_bytes", "wasm_memory_bytes"]) {
        assert.match(text, new RegExp(`^embedded_db_${name} [1-9]\\d+$`, "m"));
      }
    });

    await t.step("values come back as in the server's thread", async () => {
      await db.insertInto("projects").values({ name: "types", label: null }).execute();
      const probe = await db.insertInto("probes").values({
        project: "types",
        probe_id: "p1",
        url: "https://a.test/",
        method: "GET",
        headers: json({ "x-a": "1" }),
        body: json({ list: [1, "é", null], flag: true }),
        latency: 5,
      }).returning(["key", "created_at", "headers", "body", "latency"]).executeTakeFirstOrThrow();
      assert.ok(probe.created_at instanceof Date);
      assert.deepEqual(probe.headers, { "x-a": "1" });
      assert.deepEqual(probe.body, { list: [1, "é", null], flag: true });
      assert.equal(probe.latency, 5);
      const { rows } = await sql<{ buckets: number[]; big: unknown; yes: boolean; none: null }>`
        select array[1, 2, 3]::integer[] as buckets, ${probe.key}::bigint as big,
               true as yes, null as none`.execute(db);
      assert.deepEqual(rows[0].buckets, [1, 2, 3]);
      assert.equal(String(rows[0].big), String(probe.key));
      assert.equal(rows[0].yes, true);
      assert.equal(rows[0].none, null);
      const { numUpdatedRows } = await db.updateTable("projects").set({ label: "x" })
        .where("name", "=", "types").executeTakeFirst();
      assert.equal(numUpdatedRows, 1n);
      const when = new Date("2026-01-02T03:04:05.678Z");
      const [echo] = (await sql<{ at: Date }>`select ${when}::timestamptz as at`.execute(db)).rows;
      assert.equal(echo.at.toISOString(), when.toISOString());
    });

    await t.step("errors keep PostgreSQL's code and fields", async () => {
      const error = await db.insertInto("projects").values({ name: "types" }).execute()
        .then(() => null, (e) => e);
      assert.ok(error instanceof Error);
      assert.equal((error as { code?: string }).code, "23505");
      assert.ok(isUniqueViolation(error, "projects_pkey"));
      assert.match(error.message, /duplicate key/);
      const nul = await sql`select ${"a\u0000b"}::text`.execute(db).then(() => null, (e) => e);
      assert.equal(nul?.code, "22021");
    });

    await t.step("a transaction commits, or rolls back when it throws", async () => {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto("projects").values({ name: "kept" }).execute();
      });
      const failure = await db.transaction().execute(async (trx) => {
        await trx.insertInto("projects").values({ name: "undone" }).execute();
        throw new Error("changed my mind");
      }).then(() => null, (e) => e);
      assert.equal(failure?.message, "changed my mind");
      // A statement failing inside the transaction rolls it all back too.
      const failed = await db.transaction().execute(async (trx) => {
        await trx.insertInto("projects").values({ name: "undone-too" }).execute();
        await trx.insertInto("projects").values({ name: "kept" }).execute();
      }).then(() => null, (e) => e);
      assert.equal(failed?.code, "23505");
      const names = await db.selectFrom("projects").select("name").orderBy("name").execute();
      assert.deepEqual(names.map((n) => n.name), ["kept", "types"]);
    });

    await t.step("a query outside a transaction waits for it to end", async () => {
      const inside = Promise.withResolvers<void>();
      const release = Promise.withResolvers<void>();
      const transaction = db.transaction().execute(async (trx) => {
        await trx.insertInto("projects").values({ name: "late" }).execute();
        inside.resolve();
        await release.promise;
      });
      await inside.promise;
      let answered = false;
      const outside = db.selectFrom("projects").select("name").where("name", "=", "late")
        .execute().then((rows) => {
          answered = true;
          return rows;
        });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(answered, false, "it waits");
      release.resolve();
      await transaction;
      assert.deepEqual(await outside, [{ name: "late" }], "and sees what was committed");
    });

    await t.step("the calling thread keeps turning while a statement runs", async () => {
      let ticks = 0;
      let last = performance.now();
      let longest = 0;
      const timer = setInterval(() => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
        ticks++;
      }, 20);
      try {
        await sql`select pg_sleep(1)`.execute(db);
      } finally {
        clearInterval(timer);
      }
      longest = Math.max(longest, performance.now() - last);
      // A blocked thread would tick at most once, after the statement, with a pause of ~1 s; the
      // bounds leave room for a loaded machine, where 20 ms timers can run several times late.
      assert.ok(ticks >= 4, `${ticks} timer ticks during a 1 s statement`);
      assert.ok(longest < 700, `the longest pause was ${Math.round(longest)} ms`);
    });

    await handle.close();
    assert.equal(
      await db.selectFrom("projects").select("name").execute().then(() => "answered", () => "no"),
      "no",
      "a closed database answers nothing",
    );

    await t.step("closed cleanly: the data is there when opened again", async () => {
      const again = await openDatabase({ kind: "pglite", dataDir: `${dir}/pgdata` });
      try {
        const names = await again.db.selectFrom("projects").select("name").orderBy("name")
          .execute();
        assert.deepEqual(names.map((n) => n.name), ["kept", "late", "types"]);
      } finally {
        await again.close();
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an embedded database in memory runs in the calling thread, open to tests", async () => {
  const handle = await freshDatabase("pglite");
  try {
    assert.ok(handle.pglite, "pglite is at hand");
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(handle.db);
    assert.equal(rows[0].one, 1);
    assert.deepEqual(await settings(handle.db), EMBEDDED_SETTINGS, "with the same settings");
  } finally {
    await handle.close();
  }
});

Deno.test("a data folder without a database gets one, then serves from a worker of its own", async () => {
  const dir = await Deno.makeTempDir({ prefix: "probe-pglite-create-" });
  try {
    const handle = await openDatabase({ kind: "pglite", dataDir: `${dir}/pgdata` });
    try {
      assert.ok((await Deno.stat(`${dir}/pgdata/PG_VERSION`)).isFile, "the database was created");
      assert.deepEqual(await settings(handle.db), EMBEDDED_SETTINGS);
      await migrateToLatest(handle.db);
      await handle.db.insertInto("projects").values({ name: "first" }).execute();
    } finally {
      await handle.close();
    }
    const again = await openDatabase({ kind: "pglite", dataDir: `${dir}/pgdata` });
    try {
      const names = await again.db.selectFrom("projects").select("name").execute();
      assert.deepEqual(names.map((n) => n.name), ["first"], "what it wrote is kept");
    } finally {
      await again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
