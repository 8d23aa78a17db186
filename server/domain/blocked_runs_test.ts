/**
 * Runs the network policy refuses (`blocked`) are counted apart, as runs in maintenance are: a
 * probe at a loopback target, run while `PROBE_ALLOW_NETWORKS` does not open loopback, has no
 * failure in its statistics, its status board line, its overview uptime and bars or its series;
 * the overview says why it is blocked. Once the network is opened its runs count, and its uptime
 * is 100%. Through the HTTP handler (run-now with the real executor and network policy), on PGlite
 * and on PostgreSQL.
 */
import assert from "node:assert/strict";
import { createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
import { createNetworkPolicy, parseNetworks } from "../base/outbound/network_policy.ts";
import { executeProbe } from "../runner/execute.ts";
import { backends, freshDatabase, TEST_API_KEY, TestClient, uniqueName } from "../testing/app.ts";
import { startTarget } from "../testing/target_server.ts";

for (const backend of backends()) {
  Deno.test(`blocked runs are counted apart, never as failures [${backend}]`, async () => {
    const target = await startTarget();
    // What PROBE_ALLOW_NETWORKS says at each run: first nothing, as on a fresh start.
    let allow = "";
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      runProbe: (probe, hooks) =>
        executeProbe(probe, {
          ...hooks,
          policy: createNetworkPolicy(parseNetworks(allow)),
          timeoutMs: 5_000,
        }),
    });
    const api = new TestClient(app.handler);
    try {
      const project = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const made = await api.post(`/api/v1/projects/${project}/probes`, {
        url: `${target.origin}/ok`,
      });
      assert.equal(made.status, 201, made.text);
      const path = `/api/v1/projects/${project}/probes/${made.body.data.probe_id}`;
      const overviewProbe = async () =>
        (await api.get(`/api/v1/overview?project=${project}`)).body.data.projects[0].probes[0];
      const runNow = async (outcome: string) => {
        const ran = await api.post(`${path}/run`);
        assert.equal(ran.status, 200, ran.text);
        assert.equal(ran.body.data.outcome, outcome);
      };

      for (let i = 0; i < 3; i++) await runNow("blocked");
      assert.equal(target.hits.length, 0, "a blocked run reaches nothing");
      const stats = (await api.get(`${path}/stats?window=1h`)).body.data;
      assert.deepEqual(
        [stats.runs, stats.up, stats.down, stats.blocked, stats.maintenance, stats.uptime],
        [0, 0, 0, 3, 0, null],
      );
      assert.equal(stats.last_outcome, "blocked");
      const [line] = (await api.get(`/api/v1/projects/${project}/status`)).body.data;
      assert.deepEqual([line.runs_24h, line.uptime_24h], [0, null]);
      const blocked = await overviewProbe();
      assert.deepEqual([blocked.uptime_24h, blocked.uptime_7d, blocked.uptime_30d], [
        null,
        null,
        null,
      ]);
      assert.deepEqual(blocked.sparkline.filter((h: number | null) => h !== null), []);
      assert.equal(blocked.last_outcome, "blocked");
      assert.equal(
        blocked.blocked_reason,
        "blocked: 127.0.0.1 is loopback (not in PROBE_ALLOW_NETWORKS)",
      );
      const series = (await api.get(`${path}/series?window=1h`)).body.data;
      const sum = (field: string) =>
        series.buckets.reduce((n: number, b: Record<string, number>) => n + b[field], 0);
      assert.deepEqual([sum("runs"), sum("down"), sum("blocked")], [0, 0, 3]);

      // PROBE_ALLOW_NETWORKS opens loopback: the target is healthy, and 100% up.
      allow = "127.0.0.0/8";
      for (let i = 0; i < 2; i++) await runNow("up");
      const opened = (await api.get(`${path}/stats?window=1h`)).body.data;
      assert.deepEqual(
        [opened.runs, opened.up, opened.down, opened.blocked, opened.uptime],
        [2, 2, 0, 3, 1],
      );
      const up = await overviewProbe();
      assert.deepEqual([up.uptime_24h, up.uptime_7d, up.uptime_30d], [1, 1, 1]);
      // One hour's bar, or two when the runs fell on each side of the hour: all up.
      const bars = up.sparkline.filter((h: number | null) => h !== null);
      assert.ok(bars.length >= 1 && bars.length <= 2, JSON.stringify(up.sparkline));
      assert.ok(bars.every((h: number) => h === 1), JSON.stringify(up.sparkline));
      assert.equal(up.blocked_reason, null);
      const [after] = (await api.get(`/api/v1/projects/${project}/status`)).body.data;
      assert.deepEqual([after.runs_24h, after.uptime_24h], [2, 1]);
    } finally {
      await app.close();
      await target.close();
    }
  });
}
