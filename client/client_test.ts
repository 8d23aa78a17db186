import assert from "node:assert/strict";
import { backends, uniqueName } from "../server/testing/app.ts";
import { type LiveServer, startLiveServer } from "../server/testing/live.ts";
import { insertRuns } from "../server/runner/store.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { runDueProbesOnce } from "../server/testing/runs.ts";
import { createProbeClient, ProbeApiError, type ProbeClient } from "./mod.ts";

/** Runs `fn` and answers the ProbeApiError it must reject with. */
async function failure(fn: () => Promise<unknown>): Promise<ProbeApiError> {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof ProbeApiError, `expected a ProbeApiError, got ${error}`);
    return error;
  }
  assert.fail("the call succeeded");
}

for (const backend of backends()) {
  Deno.test(`typed client against a live server [${backend}]`, async (t) => {
    const server: LiveServer = await startLiveServer(backend);
    const client: ProbeClient = createProbeClient({ baseUrl: server.url, apiKey: server.apiKey });
    try {
      await t.step("projects: create, get, list, update, delete", async () => {
        const project = uniqueName();
        const created = await client.projects.create({ project, label: "Shop" });
        assert.deepEqual(created, { data: { project } });

        const got = await client.projects.get({ project });
        assert.deepEqual(got.data, {
          project,
          label: "Shop",
          description: null,
          status: "enabled",
          default_locations: null,
        });

        const listed = await client.projects.list({ project });
        assert.deepEqual(listed, { data: [got.data], meta: { count: 1, next_after: null } });
        const all = await client.projects.list();
        assert.ok(all.data.some((p) => p.project === project));
        assert.equal(all.meta.count, all.data.length);

        const updated = await client.projects.update({ project, label: null, status: "disabled" });
        assert.deepEqual(updated, { data: { project } });
        const after = await client.projects.get({ project });
        assert.equal(after.data.label, null);
        assert.equal(after.data.status, "disabled");

        const deleted = await client.projects.delete({ project });
        assert.deepEqual(deleted.data, { project, deleted: true, archived: true });
        assert.equal(typeof deleted.meta.message, "string");
        const gone = await failure(() => client.projects.get({ project }));
        assert.equal(gone.status, 404);
        assert.equal(gone.code, "not_found");
      });

      await t.step("a taken project name rejects with status 409 and code conflict", async () => {
        const project = uniqueName();
        await client.projects.create({ project });
        const error = await failure(() => client.projects.create({ project }));
        assert.equal(error.status, 409);
        assert.equal(error.code, "conflict");
        assert.equal(error.name, "ProbeApiError");
      });

      await t.step("invalid input rejects with 422 and the fields at fault", async () => {
        const error = await failure(() => client.projects.create({ project: "-bad name" }));
        assert.equal(error.status, 422);
        assert.equal(error.code, "validation_failed");
        assert.ok(error.details.some((d) => d.path === "project"), JSON.stringify(error.details));
      });

      await t.step("probes: both creates, rewrite, lists, get, update, delete", async () => {
        const project = uniqueName();
        await client.projects.create({ project });
        const first = await client.probes.create({
          project,
          url: "http://127.0.0.1:9/health",
          headers: { accept: "text/plain" },
          latency: 250,
        });
        assert.equal(first.meta.created, true);
        assert.equal(first.data.project, project);
        assert.equal(first.data.url, "http://127.0.0.1:9/health");

        const again = await client.probes.create({ project, url: "http://127.0.0.1:9/health" });
        assert.equal(again.meta.created, false);
        assert.equal(again.data.probe_id, first.data.probe_id);

        const second = await client.probes.createWithProject({
          project,
          url: "http://127.0.0.1:9/other",
          method: "post",
          body: { ping: true },
        });
        assert.equal(second.meta.created, true);

        const probe = await client.probes.get({ project, probeId: second.data.probe_id });
        assert.equal(probe.data.method, "POST");
        assert.deepEqual(probe.data.body, { ping: true });

        const byProject = await client.probes.listByProject({ project });
        assert.equal(byProject.meta.count, 2);
        const filtered = await client.probes.list({ project });
        assert.deepEqual(
          filtered.data.map((p) => p.probe_id).sort(),
          byProject.data.map((p) => p.probe_id).sort(),
        );
        assert.ok((await client.probes.list()).meta.count >= 2);

        const moved = await client.probes.update({
          project,
          probeId: first.data.probe_id,
          url: "http://127.0.0.1:9/moved",
        });
        assert.notEqual(moved.data.probe_id, first.data.probe_id);
        assert.equal(moved.data.url, "http://127.0.0.1:9/moved");

        assert.equal(
          await client.probes.delete({ project, probeId: moved.data.probe_id }),
          undefined,
        );
        const gone = await failure(() =>
          client.probes.get({ project, probeId: moved.data.probe_id })
        );
        assert.equal(gone.status, 404);
        assert.equal(gone.code, "not_found");
      });

      await t.step(
        "probes: interval and timeout round-trip; bad ones reject with 422",
        async () => {
          const project = uniqueName();
          await client.projects.create({ project });
          const { data } = await client.probes.create({
            project,
            url: "http://127.0.0.1:9/scheduled",
            interval_seconds: 30,
            timeout_ms: 2_500,
          });
          const ref = { project, probeId: data.probe_id };
          let probe = (await client.probes.get(ref)).data;
          assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [30, 2_500]);
          await client.probes.update({ ...ref, interval_seconds: null, timeout_ms: 120_000 });
          probe = (await client.probes.get(ref)).data;
          assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [null, 120_000]);
          const error = await failure(() => client.probes.update({ ...ref, interval_seconds: 5 }));
          assert.equal(error.status, 422);
          assert.ok(error.details.some((d) => d.path === "interval_seconds"));
        },
      );

      await t.step("a probe for a missing project rejects with 404", async () => {
        const error = await failure(() =>
          client.probes.create({ project: uniqueName("missing"), url: "http://127.0.0.1:9/" })
        );
        assert.equal(error.status, 404);
      });

      await t.step("settings: read, update, and 422 when no field is given", async () => {
        const before = await client.settings.getIamAlive();
        assert.equal(typeof before.data.enabled, "boolean");
        const updated = await client.settings.updateIamAlive({
          interval_hours: 6,
          channels: ["log", "mail"],
        });
        assert.deepEqual(updated.data, {
          enabled: true,
          interval_hours: 6,
          channels: ["log", "mail"],
        });
        assert.deepEqual((await client.settings.getIamAlive()).data, updated.data);
        const off = await client.settings.updateIamAlive({ enabled: false });
        assert.equal(off.data.enabled, false);
        const error = await failure(() => client.settings.updateIamAlive({}));
        assert.equal(error.status, 422);
      });

      await t.step("settings: a test report now, then the deliveries list", async () => {
        await client.settings.updateIamAlive({ channels: ["log"] });
        const sent = await client.settings.testIamAlive();
        assert.equal(sent.data.report.type, "iam_alive");
        assert.equal(sent.data.report.trigger, "test");
        assert.deepEqual(sent.data.deliveries.map((d) => [d.channel, d.outcome]), [
          ["log", "delivered"],
        ]);
        const listed = await client.settings.listIamAliveDeliveries({ limit: 1 });
        assert.equal(listed.meta.count, 1);
        assert.equal(listed.data[0].sequence, sent.data.report.sequence);
        const error = await failure(() => client.settings.listIamAliveDeliveries({ limit: 0 }));
        assert.equal(error.status, 422);
      });

      await t.step("a wrong key rejects with 401 and code unauthorized", async () => {
        const stranger = createProbeClient({ baseUrl: server.url, apiKey: "wrong-key-0000" });
        const error = await failure(() => stranger.projects.list());
        assert.equal(error.status, 401);
        assert.equal(error.code, "unauthorized");
      });

      await t.step("the fetch given is used, and the key goes in X-Service-Api-Key", async () => {
        const seen: string[] = [];
        const traced = createProbeClient({
          baseUrl: `${server.url}/`,
          apiKey: server.apiKey,
          fetch: (input, init) => {
            const request = new Request(input, init);
            seen.push(`${request.method} ${new URL(request.url).pathname}`);
            assert.equal(request.headers.get("x-service-api-key"), server.apiKey);
            return fetch(request);
          },
        });
        await traced.settings.getIamAlive();
        assert.deepEqual(seen, ["GET /trpc/settings.getIamAlive"]);
      });
    } finally {
      await server.close();
    }
  });
}

for (const backend of backends()) {
  // A server of its own: the runner here runs every probe in its database.
  Deno.test(`typed client: results, statistics and status board [${backend}]`, async (t) => {
    const server = await startLiveServer(backend);
    const target = await startTarget();
    const client = createProbeClient({ baseUrl: server.url, apiKey: server.apiKey });
    const db = server.app.database.db;
    try {
      const project = uniqueName();
      await client.projects.create({ project });
      const ok = (await client.probes.create({ project, url: `${target.origin}/ok` })).data;
      const failing = (await client.probes.create({
        project,
        url: `${target.origin}/status/500`,
      })).data;

      await t.step("before any run: empty results, empty statistics, a blank board", async () => {
        assert.deepEqual(await client.results.list({ project, probeId: ok.probe_id }), {
          data: [],
          meta: { count: 0, next_before: null },
        });
        const { data: stats } = await client.results.stats({ project, probeId: ok.probe_id });
        assert.equal(stats.window, "24h", "the default window");
        assert.deepEqual(
          [stats.runs, stats.uptime, stats.p50, stats.last_outcome, stats.last_run_at],
          [0, null, null, null, null],
        );
        const board = await client.results.status({ project });
        assert.deepEqual(board.meta, { count: 2, status: "enabled" });
        assert.ok(board.data.every((p) => p.last_outcome === null && p.runs_24h === 0));
        assert.deepEqual(
          board.data.map((p) => [p.label, p.state, p.state_since]),
          [[null, "unknown", null], [null, "unknown", null]],
          "a probe that never ran has no state yet",
        );
      });

      await t.step("after a real run on loopback: results, statistics, board", async () => {
        const counters = await runDueProbesOnce(db);
        assert.equal(counters.recorded, 2);
        assert.equal(target.counts.get("/ok"), 1);

        const listed = await client.results.list({ project, probeId: ok.probe_id });
        assert.equal(listed.meta.count, 1);
        assert.equal(listed.meta.next_before, null);
        const [run] = listed.data;
        assert.deepEqual(
          { ...run, started_at: typeof run.started_at, duration_ms: typeof run.duration_ms },
          {
            started_at: "string",
            duration_ms: "number",
            outcome: "up",
            http_status: 200,
            error: null,
            address: "127.0.0.1",
            failed_checks: null,
            location: "local",
            trigger: "schedule",
            in_maintenance: false,
          },
        );
        assert.ok(Date.parse(run.started_at) <= Date.now());

        const down = await client.results.list({ project, probeId: failing.probe_id });
        assert.equal(down.data[0].outcome, "down");
        assert.equal(down.data[0].http_status, 500);
        assert.equal(down.data[0].failed_checks, null, "a probe without expect checks nothing");

        const { data: stats } = await client.results.stats({
          project,
          probeId: ok.probe_id,
          window: "1h",
        });
        assert.deepEqual(stats, {
          window: "1h",
          since: stats.since,
          runs: 1,
          up: 1,
          degraded: 0,
          down: 0,
          blocked: 0,
          maintenance: 0,
          uptime: 1,
          p50: run.duration_ms,
          p95: run.duration_ms,
          p99: run.duration_ms,
          max: run.duration_ms,
          percentiles: "exact",
          last_outcome: "up",
          last_run_at: run.started_at,
        });
        assert.ok(Date.now() - Date.parse(stats.since) >= 3_600_000);

        const board = await client.results.status({ project });
        assert.deepEqual(board.meta, { count: 2, status: "enabled" });
        const byId = new Map(board.data.map((p) => [p.probe_id, p]));
        assert.deepEqual(byId.get(ok.probe_id), {
          probe_id: ok.probe_id,
          url: ok.url,
          method: "GET",
          label: null,
          state: "up",
          state_since: run.started_at,
          last_outcome: "up",
          last_run_at: run.started_at,
          runs_24h: 1,
          uptime_24h: 1,
        });
        const failed = byId.get(failing.probe_id);
        assert.equal(failed?.last_outcome, "down");
        assert.equal(failed?.uptime_24h, 0);
        // One failing run is below the default failure_threshold (3): the state stays unknown.
        assert.deepEqual([failed?.state, failed?.state_since], ["unknown", null]);

        const read = (await client.probes.get({ project, probeId: ok.probe_id })).data;
        assert.deepEqual([read.state, read.state_since], ["up", run.started_at]);
      });

      await t.step("results come page by page through limit and before", async () => {
        // Three older runs of the same probe, stored the way the runner stores them.
        const { key } = await db.selectFrom("probes").select("key")
          .where("project", "=", project).where("probe_id", "=", ok.probe_id)
          .executeTakeFirstOrThrow();
        const now = Date.now();
        await insertRuns(
          db,
          "client-test",
          [3, 2, 1].map((hours) => ({
            key: String(key),
            due: now - hours * 3_600_000 - 60_000,
            result: {
              startedAt: new Date(now - hours * 3_600_000 - 60_000),
              durationMs: 10 + hours,
              outcome: hours === 2 ? "degraded" : "up",
              httpStatus: 200,
              error: null,
              address: "127.0.0.1",
            },
          })),
        );
        const first = await client.results.list({ project, probeId: ok.probe_id, limit: 3 });
        assert.equal(first.meta.count, 3);
        assert.deepEqual(first.data.slice(1).map((r) => r.duration_ms), [11, 12]);
        assert.equal(first.meta.next_before, first.data[2].started_at);
        const second = await client.results.list({
          project,
          probeId: ok.probe_id,
          limit: 3,
          before: first.meta.next_before!,
        });
        assert.deepEqual(second, {
          data: [{
            started_at: new Date(now - 3 * 3_600_000 - 60_000).toISOString(),
            duration_ms: 13,
            outcome: "up",
            http_status: 200,
            error: null,
            address: "127.0.0.1",
            failed_checks: null,
            location: "local",
            trigger: "schedule",
            in_maintenance: false,
          }],
          meta: { count: 1, next_before: null },
        });

        const { data: day } = await client.results.stats({ project, probeId: ok.probe_id });
        assert.deepEqual([day.runs, day.up, day.degraded, day.uptime], [4, 3, 1, 1]);
        assert.equal(day.max, Math.max(13, first.data[0].duration_ms));
        assert.equal(
          (await client.results.status({ project })).data
            .find((p) => p.probe_id === ok.probe_id)?.runs_24h,
          4,
        );
      });

      await t.step("a missing probe or project rejects with 404", async () => {
        const probeId = "0000000000000000";
        for (
          const call of [
            () => client.results.list({ project, probeId }),
            () => client.results.stats({ project, probeId }),
            () => client.results.stats({ project: uniqueName("missing"), probeId: ok.probe_id }),
            () => client.results.status({ project: uniqueName("missing") }),
          ]
        ) {
          const error = await failure(call);
          assert.equal(error.status, 404);
          assert.equal(error.code, "not_found");
        }
      });

      await t.step("a bad window, limit or before rejects with 422", async () => {
        const probeId = ok.probe_id;
        const window = await failure(() =>
          // @ts-expect-error a window the service does not know
          client.results.stats({ project, probeId, window: "2h" })
        );
        assert.equal(window.status, 422);
        assert.equal(window.code, "validation_failed");
        assert.ok(window.details.some((d) => d.path === "window"), JSON.stringify(window.details));
        for (
          const input of [{ limit: 0 }, { limit: 1001 }, { limit: 1.5 }, { before: "yesterday" }]
        ) {
          const error = await failure(() => client.results.list({ project, probeId, ...input }));
          assert.equal(error.status, 422, JSON.stringify(input));
        }
      });
    } finally {
      await target.close();
      await server.close();
    }
  });
}

Deno.test("an unreachable service rejects with status 0 and code network_error", async () => {
  // A port that was just free: nothing listens on it any more.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  const client = createProbeClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "k" });
  const error = await failure(() => client.projects.list());
  assert.equal(error.status, 0);
  assert.equal(error.code, "network_error");
  assert.match(error.message, /Could not reach the probe service/);
});

Deno.test("an answer that is not the service's rejects with code unexpected_response", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("<html>Bad gateway</html>", { status: 502 }),
  );
  try {
    const { port } = server.addr as Deno.NetAddr;
    const client = createProbeClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "k" });
    const error = await failure(() => client.settings.getIamAlive());
    assert.equal(error.status, 502);
    assert.equal(error.code, "unexpected_response");
  } finally {
    await server.shutdown();
  }
});
