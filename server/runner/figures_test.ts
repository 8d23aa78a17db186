import assert from "node:assert/strict";
import { sql } from "kysely";
import { migrateToLatest } from "../storage/migrator.ts";
import { backends, freshDatabase, uniqueName } from "../testing/app.ts";
import { runnerFigures } from "./figures.ts";
import { insertRuns, type Run } from "./store.ts";

for (const backend of backends()) {
  Deno.test(`runner figures count runs, failures and slip in a range [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    try {
      await migrateToLatest(db);
      const project = uniqueName();
      await db.insertInto("projects").values({ name: project }).execute();
      const { rows: [probe] } = await sql<{ key: string | number }>`
        insert into probes (project, probe_id, url, method, headers)
        values (${project}, 'f', 'https://f.test/', 'GET', '{}') returning key`.execute(db);
      const key = String(probe.key);
      const t0 = Date.parse("2026-01-01T00:00:00Z");
      const run = (i: number, outcome: Run["result"]["outcome"], slip: number): Run => ({
        key,
        due: t0 + i * 60_000,
        result: {
          startedAt: new Date(t0 + i * 60_000 + slip),
          durationMs: 10,
          outcome,
          httpStatus: outcome === "blocked" ? null : 200,
          error: null,
          address: null,
        },
      });
      await insertRuns(db, "r", [
        run(0, "up", 5),
        run(1, "up", 15),
        run(2, "degraded", 25),
        run(3, "down", 35),
        run(4, "blocked", 1005),
        run(10, "down", 0), // outside the range below
      ]);
      // One probe scheduled, overdue by two minutes at `until`, not leased.
      await sql`insert into probe_schedule (probe_key, next_due_at)
                values (${key}, ${new Date(t0 + 3 * 60_000)})`.execute(db);
      // A run given back for its host's cap, unclaimable for a while, is claimed by no runner.
      await sql`update probe_schedule set lease_until = ${new Date(t0 + 6 * 60_000)}
                where probe_key = ${key}`.execute(db);

      const figures = await runnerFigures({
        db,
        since: new Date(t0),
        until: new Date(t0 + 5 * 60_000),
      });
      assert.deepEqual(figures, {
        since: "2026-01-01T00:00:00.000Z",
        until: "2026-01-01T00:05:00.000Z",
        runs: 5,
        failures: 2,
        outcomes: { up: 2, degraded: 1, down: 1, blocked: 1 },
        slip: { p50: 25, p99: 1005, max: 1005 },
        probes: { scheduled: 1, overdue: 1 },
      });

      await db.updateTable("projects").set({ status: "disabled" }).where("name", "=", project)
        .execute();
      const empty = await runnerFigures({
        db,
        since: new Date(t0 + 20 * 60_000),
        until: new Date(t0 + 30 * 60_000),
      });
      assert.equal(empty.runs, 0);
      assert.equal(empty.slip, null);
      assert.deepEqual(empty.probes, { scheduled: 0, overdue: 0 }, "disabled projects' probes");
    } finally {
      await handle.close();
    }
  });
}
