/**
 * The typed client's dashboard calls (`overview.get`, `results.series`) against a real app,
 * in-process: the client's fetch hands each request to the app's handler, and the runs are made
 * by run-now against a local target. Every case runs on PGlite and, with TEST_DATABASE_URL, on
 * PostgreSQL.
 */
import assert from "node:assert/strict";
import { apiSuite, uniqueName } from "../server/testing/app.ts";
import { startTarget } from "../server/testing/target_server.ts";

import { clientOf, rejects } from "./testing.ts";

apiSuite("typed client: overview and series", (test) => {
  test("each call reaches its own procedure, one request each", async (t) => {
    const seen: string[] = [];
    const client = clientOf(t, seen);
    const project = uniqueName();
    await client.projects.create({ project });
    const { data: probe } = await client.probes.create({ project, url: "https://x.example/" });
    seen.length = 0;
    await client.overview.get();
    await client.overview.get({ project });
    await client.results.series({ project, probeId: probe.probe_id });
    assert.deepEqual(seen, [
      "GET /trpc/overview.get",
      "GET /trpc/overview.get",
      "GET /trpc/results.series",
    ]);
  });

  test("a failing then recovered probe: the overview and its series show the runs", async (t) => {
    const client = clientOf(t);
    const target = await startTarget();
    try {
      const project = uniqueName();
      await client.projects.create({ project, label: "Shop" });
      await client.alerts.updateProject({ project, failure_threshold: 1, success_threshold: 1 });
      const { data: healthy } = await client.probes.create({
        project,
        url: `${target.origin}/health`,
        label: "Health",
      });
      // Checks the same page, and fails while it reports DOWN.
      const { data: broken } = await client.probes.create({
        project,
        url: `${target.origin}/health?strict=1`,
        expect: { json: [{ path: "/status", op: "eq", value: "UP" }] },
      });
      const { data: idle } = await client.probes.create({ project, url: "https://idle.example/" });
      const ref = (probeId: string) => ({ project, probeId });
      target.setHealth(200, { status: "DOWN" });
      await client.probes.run(ref(healthy.probe_id));
      await client.probes.run(ref(broken.probe_id));

      const first = await client.overview.get({ project });
      assert.deepEqual(first.meta.projects, 1);
      assert.deepEqual(first.meta.probes, 3);
      assert.ok(Math.abs(Date.parse(first.meta.generated_at) - Date.now()) < 60_000);
      const [shop] = first.data.projects;
      assert.deepEqual([shop.project, shop.label, shop.status], [project, "Shop", "enabled"]);
      assert.deepEqual(
        shop.probes.map((p) => [p.probe_id, p.state, p.last_outcome, p.uptime_24h]),
        [
          [broken.probe_id, "down", "down", 0],
          [idle.probe_id, "unknown", null, null],
          [healthy.probe_id, "up", "up", 1],
        ],
      );
      assert.equal(shop.probes[2].sparkline.length, 24);
      assert.equal(typeof shop.probes[2].p95_24h, "number");
      assert.deepEqual(
        first.data.incidents.map((i) => [i.probe_id, i.state]),
        [[broken.probe_id, "open"]],
      );

      // The page reports UP again: one passing run recovers the probe.
      target.setHealth(200, { status: "UP" });
      await client.probes.run(ref(broken.probe_id));
      const second = await client.overview.get({ project });
      assert.deepEqual(second.data.incidents, []);
      assert.deepEqual(
        second.data.projects[0].probes.map((p) => [p.probe_id, p.state, p.uptime_24h]),
        [
          [idle.probe_id, "unknown", null],
          [healthy.probe_id, "up", 1],
          [broken.probe_id, "up", 0.5],
        ],
      );

      const { data: series } = await client.results.series(ref(healthy.probe_id));
      assert.equal(series.window, "24h");
      assert.equal(series.bucket_seconds, 300);
      assert.equal(series.percentiles, "exact");
      assert.equal(series.buckets.length, 288);
      const ran = series.buckets.filter((b) => b.runs > 0);
      assert.equal(ran.length, 1);
      assert.deepEqual([ran[0].up, ran[0].uptime], [1, 1]);
      assert.equal(ran[0].p50, ran[0].max);

      for (const window of ["7d", "30d", "90d"] as const) {
        const { data } = await client.results.series({ ...ref(healthy.probe_id), window });
        assert.equal(data.window, window);
        assert.equal(data.percentiles, "estimated");
        assert.equal(data.buckets.filter((b) => b.runs > 0).length, 1, window);
      }
    } finally {
      await target.close();
    }
  });

  test("failures reject with the service's error", async (t) => {
    const client = clientOf(t);
    const project = uniqueName();
    await client.projects.create({ project });
    await rejects(() => client.overview.get({ project: uniqueName() }), 404, "not_found");
    await rejects(
      () => client.results.series({ project, probeId: "0000000000000000" }),
      404,
      "not_found",
    );
    const { data: probe } = await client.probes.create({ project, url: "https://y.example/" });
    await rejects(
      // @ts-expect-error a window the service does not offer
      () => client.results.series({ project, probeId: probe.probe_id, window: "1y" }),
      422,
      "validation_failed",
      "window",
    );
  });
});
