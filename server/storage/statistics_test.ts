/**
 * The planner's statistics are kept by the service where nothing else keeps them: on the
 * embedded database always, on a PostgreSQL server only when its autovacuum is off (then with a
 * warning), and a table changed by more than a tenth of its rows is analyzed again within a check,
 * as autovacuum would. Read back from `pg_stat_user_tables` and `pg_class`.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createLogger } from "../base/log.ts";
import { backends, freshDatabase } from "../testing/app.ts";
import {
  keepStatistics,
  keepStatisticsIfNeeded,
  staleTables,
  warnAutovacuumOff,
} from "./statistics.ts";

for (const backend of backends()) {
  Deno.test(`statistics kept where no autovacuum keeps them [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const lines: string[] = [];
    try {
      await sql`insert into projects (name) values ('stats')`.execute(handle.db);
      const { rows: [{ autovacuum }] } = await sql<{ autovacuum: string }>`show autovacuum`
        .execute(handle.db);
      const log = createLogger("info", (line) => lines.push(line));
      const keeper = await keepStatisticsIfNeeded({ handle, log });
      assert.equal(lines.length, 0, "an app says nothing; its process warns");
      warnAutovacuumOff(keeper, log);
      await keeper?.stop();
      const { rows: [row] } = await sql<{ analyzed: boolean }>`
        select last_analyze is not null as analyzed from pg_stat_user_tables
        where relname = 'projects'`.execute(handle.db);
      const expected = backend === "pglite" || autovacuum === "off";
      assert.equal(keeper !== null, expected, `autovacuum ${autovacuum}`);
      if (keeper) assert.equal(keeper.why, backend === "pglite" ? "embedded" : "autovacuum off");
      assert.equal(row.analyzed, expected);
      const warned = lines.some((l) => l.includes("autovacuum is off"));
      assert.equal(warned, backend === "postgres" && autovacuum === "off");
    } finally {
      await handle.close();
    }
  });
}

/** The planner's idea of a table's size: -1 before its first analysis. */
async function estimatedRows(db: Parameters<typeof staleTables>[0], table: string) {
  const { rows: [row] } = await sql<{ n: number }>`
    select reltuples::float8 as n from pg_class where oid = ${table}::regclass`.execute(db);
  return row.n;
}

for (const backend of backends()) {
  Deno.test(`a table changed by more than a tenth is analyzed again at the next check [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    const keeper = keepStatistics({ db, log: createLogger("error", () => {}), everyMs: 50 });
    try {
      await sql`insert into projects (name) select 'p' || i from generate_series(1, 40) i`
        .execute(db);
      // The first analysis (at start) and then a few checks: 40 changed rows are under the
      // threshold of 50, so the estimate stays what the start's ANALYZE saw.
      await new Promise((r) => setTimeout(r, 300));
      const before = await estimatedRows(db, "projects");
      assert.ok(before <= 40, `estimate ${before}`);
      await sql`insert into projects (name) select 'q' || i from generate_series(1, 2000) i`
        .execute(db);
      let after = before;
      for (let i = 0; i < 100 && after < 2000; i++) {
        await new Promise((r) => setTimeout(r, 50));
        after = await estimatedRows(db, "projects");
      }
      assert.ok(after >= 2000, `estimate ${after} after 2,000 more rows`);
      assert.ok(!(await staleTables(db)).some((t) => t.table === "projects"));
    } finally {
      await keeper.stop();
      await handle.close();
    }
  });
}
