/**
 * The planner's statistics are kept by the service where nothing else keeps them: on the
 * embedded database always, on a PostgreSQL server only when its autovacuum is off (then with a
 * warning). Read back from `pg_stat_user_tables`.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createLogger } from "../log.ts";
import { backends, freshDatabase } from "../testing/app.ts";
import { keepStatisticsIfNeeded, warnAutovacuumOff } from "./statistics.ts";

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
