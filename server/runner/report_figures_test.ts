import assert from "node:assert/strict";
import { iamAliveRunnerFigures } from "@probe/shared";
import { json } from "../storage/json.ts";
import { migrateToLatest } from "../storage/migrator.ts";
import { backends, freshDatabase, uniqueName } from "../testing/app.ts";
import { runDueProbesOnce } from "../testing/runs.ts";
import { startTarget } from "../testing/target_server.ts";
import { reportRunnerFigures } from "./report_figures.ts";

for (const backend of backends()) {
  Deno.test(`runner figures in the report count real runs by outcome [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const target = await startTarget();
    const db = handle.db;
    try {
      await migrateToLatest(db);
      const project = uniqueName();
      await db.insertInto("projects").values({ name: project }).execute();
      // A different number of each outcome, so that no two counts can stand in for each other:
      // 4 up, 1 degraded (slower than its latency), 2 down (HTTP 500), 3 blocked (private or
      // link-local addresses, which the runner may not reach: only loopback is open to it).
      const urls: { url: string; latency?: number }[] = [
        ...[1, 2, 3, 4].map((i) => ({ url: `${target.origin}/ok?i=${i}` })),
        { url: `${target.origin}/slow?ms=150`, latency: 20 },
        ...[1, 2].map((i) => ({ url: `${target.origin}/status/500?i=${i}` })),
        { url: "http://10.0.0.1/" },
        { url: "http://192.168.0.1/" },
        { url: "http://169.254.169.254/" },
      ];
      await db.insertInto("probes").values(urls.map(({ url, latency }, i) => ({
        project,
        probe_id: `p${i}`,
        url,
        method: "GET",
        headers: json({}),
        latency: latency ?? null,
      }))).execute();
      const before = new Date();
      const counters = await runDueProbesOnce(db);
      assert.equal(counters.recorded, urls.length, "every probe ran once and was recorded");
      // Blocked probes reach nothing; the others reached the target once each.
      assert.equal(target.hits.length, 7);

      const figures = await reportRunnerFigures(db)(new Date(before.getTime() - 1000));
      assert.equal(iamAliveRunnerFigures.safeParse(figures).success, true);
      assert.equal(figures.up, 4, "up");
      assert.equal(figures.degraded, 1, "degraded");
      assert.equal(figures.down, 2, "down");
      assert.equal(figures.blocked, 3, "blocked");
      assert.equal(figures.runs, 10, "runs");
      assert.equal(figures.failures, 5, "failures: down and blocked");
      assert.equal(figures.probes_scheduled, 10, "probes_scheduled");
      assert.equal(figures.probes_overdue, 0, "probes_overdue: each is next due in an interval");
      assert.equal(typeof figures.slip_p50_ms, "number");
      assert.ok(figures.slip_p50_ms! <= figures.slip_p99_ms!, "p50 <= p99");
      assert.ok(figures.slip_p99_ms! <= figures.slip_max_ms!, "p99 <= max");

      // Runs before `since` are left out.
      const later = await reportRunnerFigures(db)(new Date(Date.now() + 1000));
      assert.deepEqual(
        [later.runs, later.failures, later.up, later.degraded, later.down, later.blocked],
        [0, 0, 0, 0, 0, 0],
      );
      assert.equal("slip_p50_ms" in later, false, "no slip figures without runs");
    } finally {
      await target.close();
      await handle.close();
    }
  });
}
