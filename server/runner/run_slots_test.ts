/**
 * After a restart the overdue probes start spread over part of the interval, each at its own point,
 * not all at once: on a fake clock, polled a second at a time. Probes are made through the API;
 * runs go to a loopback target; start times are read back. The slots shared fairly between hosts
 * take real seconds of slow targets: they are in the end-to-end tier (`e2e/timed/run_slots_test.ts`).
 */
import assert from "node:assert/strict";
import { createLogger } from "../base/log.ts";
import { backends, LOOPBACK_ONLY, startTestApp, TestClient, uniqueName } from "../testing/app.ts";
import { createRunner } from "./runner.ts";
import { restartDelay } from "../domain/schedule.ts";
import { syncSchedules } from "./store.ts";
import { startTarget } from "../testing/target_server.ts";
import { fakeClock } from "../testing/runner_clock.ts";

for (const backend of backends()) {
  Deno.test(`run slots [${backend}]`, async (t) => {
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    const db = app.database.db;
    const fast = await startTarget();
    const probesOf = async (project: string) =>
      (await db.selectFrom("probes").select(["key", "url"]).where("project", "=", project)
        .execute()).map((p) => ({ key: String(p.key), url: p.url }));

    try {
      await t.step(
        "after a restart, overdue probes start spread over half the interval, each at its own point",
        async () => {
          const INTERVAL = 60_000;
          const SPREAD = 30_000;
          const project = uniqueName();
          await api.post("/api/v1/projects", { project });
          for (let i = 0; i < 20; i++) {
            await api.post(`/api/v1/projects/${project}/probes`, {
              url: `${fast.origin}/ok?restart=${i}`,
            });
          }
          // Far ahead of real time, so no other step's probe is due here.
          const t0 = Math.ceil(Date.now() / INTERVAL) * INTERVAL + 1000 * INTERVAL;
          // The runner before the outage scheduled them (due at t0) and never ran them.
          await syncSchedules(db, { now: t0, intervalMs: INTERVAL });
          // Five minutes later a runner starts: every probe is overdue.
          const { fake, clock } = fakeClock(t0 + 5 * INTERVAL);
          const restartedAt = fake.now;
          const runner = createRunner({
            db,
            log: createLogger("silent"),
            clock,
            intervalMs: INTERVAL,
            timeoutMs: 5_000,
            concurrency: 8,
            retentionDays: 7,
            policy: LOOPBACK_ONLY,
            retryPauseMs: 1,
            lookaheadMs: 0,
          });
          const claimedFirst = await runner.poll();
          await runner.idle();
          assert.ok(claimedFirst <= 2, `${claimedFirst} of 20 overdue probes started at once`);
          let claimed = claimedFirst;
          for (let s = 1; s <= SPREAD / 1000; s++) {
            fake.tick(1_000);
            claimed += await runner.poll();
            await runner.idle();
          }
          assert.ok(claimed >= 20, "all ran within the spread (some again, on their grid)");

          const probes = await probesOf(project);
          const rows = await db.selectFrom("probe_results")
            .select(["probe_key", (eb) => eb.fn.min("started_at").as("started_at")])
            .where("probe_key", "in", probes.map((p) => p.key))
            .where("due_at", "=", new Date(t0)).groupBy("probe_key").execute();
          assert.equal(rows.length, 20, "each overdue run made once");
          const starts = new Set<number>();
          for (const row of rows) {
            const started = new Date(row.started_at).getTime() - restartedAt;
            const at = restartDelay(row.probe_key, INTERVAL, SPREAD);
            // Polled once a second: each starts in the second its point of the spread falls in.
            assert.ok(started >= at && started < at + 1_000, `${started} for ${at}`);
            starts.add(started);
          }
          assert.ok(starts.size >= 12, `only ${starts.size} distinct start seconds`);
          await api.delete(`/api/v1/projects/${project}`);
        },
      );
    } finally {
      await fast.close();
      await app.close();
    }
  });
}
