import assert from "node:assert/strict";
import type { Outcome } from "@probe/shared";
import { sql } from "kysely";
import { generateOpenApiDocument } from "trpc-to-openapi";
import type { Db } from "../storage/database.ts";
import { apiSuite, type TestContext, uniqueName } from "../testing/app.ts";
import { appRouter } from "../procedures/router.ts";
import { pruneOnce } from "../runner/prune.ts";
import { insertRuns, type Run } from "../runner/store.ts";
import { startTarget } from "../testing/target_server.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A project with one probe; returns its path and internal key. */
async function probeOf({ api, app }: TestContext, url = "https://example.test/") {
  const project = uniqueName();
  await api.post("/api/v1/projects", { project });
  const created = await api.post(`/api/v1/projects/${project}/probes`, { url });
  const probeId: string = created.body.data.probe_id;
  const row = await app.database.db.selectFrom("probes").select("key")
    .where("project", "=", project).where("probe_id", "=", probeId).executeTakeFirstOrThrow();
  return {
    project,
    probeId,
    key: String(row.key),
    path: `/api/v1/projects/${project}/probes/${probeId}`,
  };
}

function run(
  key: string,
  startedAt: number,
  outcome: Outcome,
  durationMs: number,
  status?: number,
): Run {
  const httpStatus = status ??
    (outcome === "up" || outcome === "degraded" ? 200 : outcome === "down" ? 503 : null);
  return {
    key,
    due: startedAt,
    result: {
      startedAt: new Date(startedAt),
      durationMs,
      outcome,
      httpStatus,
      error: outcome === "up" ? null : outcome,
      address: "192.0.2.1",
    },
  };
}

const count = async (db: Db, table: "probe_results" | "probe_rollups", key: string) =>
  Number(
    (await db.selectFrom(table).select((eb) => eb.fn.countAll().as("n")).where(
      "probe_key",
      "=",
      key,
    )
      .executeTakeFirstOrThrow()).n,
  );

apiSuite("results and statistics", (test) => {
  test("percentiles over known latencies are exact while raw results are kept", async (t) => {
    const { key, path } = await probeOf(t);
    const now = Date.now();
    // 100 responses taking 1..100 ms, 10 of them 503s, plus 5 blocked runs and 5 timeouts.
    const runs: Run[] = [];
    for (let ms = 1; ms <= 100; ms++) {
      runs.push(
        run(
          key,
          now - 50 * 60_000 + ms * 1000,
          ms % 10 === 0 ? "down" : ms > 80 ? "degraded" : "up",
          ms,
        ),
      );
    }
    for (let i = 0; i < 5; i++) runs.push(run(key, now - 40 * 60_000 + i, "blocked", 0));
    for (let i = 0; i < 5; i++) runs.push(run(key, now - 30 * 60_000 + i, "down", 10_000, 0));
    runs.slice(-5).forEach((r) => (r.result.httpStatus = null));
    await insertRuns(t.app.database.db, "test", runs);

    const res = await t.api.get(`${path}/stats?window=1h`);
    assert.equal(res.status, 200);
    const s = res.body.data;
    // The 5 blocked runs apart: in neither runs nor uptime.
    assert.equal(s.runs, 105);
    assert.deepEqual([s.up, s.degraded, s.down, s.blocked], [72, 18, 15, 5]);
    assert.equal(s.uptime, 90 / 105);
    assert.deepEqual([s.p50, s.p95, s.p99, s.max], [50, 95, 99, 100]);
    assert.equal(s.percentiles, "exact");
    assert.equal(s.window, "1h");
  });

  test("90-day statistics still answer after raw results are pruned", async (t) => {
    const { key, path } = await probeOf(t);
    const db = t.app.database.db;
    const now = Date.now();
    // One run a day for 80 days, at 10 to 800 ms; every 8th is down.
    const runs: Run[] = [];
    for (let day = 1; day <= 80; day++) {
      runs.push(run(key, now - day * DAY - 5 * 60_000, day % 8 === 0 ? "down" : "up", day * 10));
    }
    // And one run 401 days ago, beyond the rollups' 400 days.
    runs.push(run(key, now - 401 * DAY, "up", 5));
    await insertRuns(db, "test", runs);

    const pruned = await pruneOnce(db, {
      now,
      retentionDays: 7,
      batch: 10,
      pause: () => Promise.resolve(),
    });
    assert.ok(pruned.results >= 74, `pruned ${pruned.results} results`);
    assert.ok(pruned.rollups >= 1);
    assert.equal(await count(db, "probe_results", key), 6, "days 1 to 6 remain raw");

    const s = (await t.api.get(`${path}/stats?window=90d`)).body.data;
    assert.equal(s.runs, 80);
    assert.equal(s.down, 10);
    assert.equal(s.uptime, 70 / 80);
    assert.equal(s.percentiles, "estimated");
    assert.equal(s.max, 800);
    // The true p50 over 10..800 ms is 400, p95 760, p99 800: estimates land within a bucket.
    assert.ok(Math.abs(s.p50 - 400) <= 100, `p50 ${s.p50}`);
    assert.ok(Math.abs(s.p95 - 760) <= 190, `p95 ${s.p95}`);
    assert.ok(s.p99 <= 800 && s.p99 >= 600, `p99 ${s.p99}`);

    const week = (await t.api.get(`${path}/stats?window=7d`)).body.data;
    assert.equal(week.runs, 6);
    assert.equal(week.percentiles, "exact");
    assert.equal(week.max, 60);
  });

  test("results come newest first, a page at a time", async (t) => {
    const { key, path } = await probeOf(t);
    const now = Date.now();
    await insertRuns(
      t.app.database.db,
      "test",
      [0, 1, 2, 3, 4].map((i) => run(key, now - i * 60_000, "up", 10 + i)),
    );
    const first = await t.api.get(`${path}/results?limit=2`);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.data.map((r: { duration_ms: number }) => r.duration_ms), [10, 11]);
    assert.deepEqual(first.body.data[0], {
      started_at: new Date(now).toISOString(),
      duration_ms: 10,
      outcome: "up",
      http_status: 200,
      error: null,
      address: "192.0.2.1",
      failed_checks: null,
      location: "local",
      trigger: "schedule",
      in_maintenance: false,
    });
    assert.equal(first.body.meta.count, 2);
    const before = encodeURIComponent(first.body.meta.next_before);
    const second = await t.api.get(`${path}/results?limit=2&before=${before}`);
    assert.deepEqual(second.body.data.map((r: { duration_ms: number }) => r.duration_ms), [12, 13]);
    const third = await t.api.get(
      `${path}/results?limit=2&before=${encodeURIComponent(second.body.meta.next_before)}`,
    );
    assert.deepEqual(third.body.data.map((r: { duration_ms: number }) => r.duration_ms), [14]);
    assert.equal(third.body.meta.next_before, null);
    const all = await t.api.get(`${path}/results`);
    assert.equal(all.body.meta.count, 5);
  });

  test("bad query values are a 422, an unknown probe or project a 404", async (t) => {
    const { project, path } = await probeOf(t);
    for (const q of ["limit=0", "limit=1001", "limit=ten", "before=yesterday"]) {
      const res = await t.api.get(`${path}/results?${q}`);
      assert.equal(res.status, 422, q);
      assert.equal(res.body.error.code, "validation_failed");
    }
    assert.equal((await t.api.get(`${path}/stats?window=2h`)).status, 422);
    const missing = await t.api.get(`/api/v1/projects/${project}/probes/0000000000000000/stats`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.message, "Probe not found");
    assert.equal(
      (await t.api.get(`/api/v1/projects/${project}/probes/0000000000000000/results`)).status,
      404,
    );
    const noProject = await t.api.get(`/api/v1/projects/${uniqueName()}/status`);
    assert.equal(noProject.status, 404);
    assert.equal(noProject.body.error.message, "Project not found");
    assert.equal((await t.api.get(`${path}/stats`, { key: null })).status, 401);
  });

  test("a probe that never ran has empty statistics", async (t) => {
    const { path } = await probeOf(t);
    const s = (await t.api.get(`${path}/stats`)).body.data;
    assert.equal(s.window, "24h");
    assert.equal(s.runs, 0);
    assert.equal(s.uptime, null);
    assert.equal(s.p50, null);
    assert.equal(s.last_outcome, null);
    assert.equal(s.last_run_at, null);
  });

  test("the status board shows each probe's last outcome and 24-hour uptime", async (t) => {
    const { project, key } = await probeOf(t, "https://a.example.test/");
    const other = await t.api.post(`/api/v1/projects/${project}/probes`, {
      url: "https://b.example.test/",
      label: "B",
    });
    const now = Date.now();
    // 23.5 hours ago and 25 hours ago: only the first is within 24 hours.
    await insertRuns(t.app.database.db, "test", [
      run(key, now - 23.5 * HOUR, "down", 10),
      run(key, now - 25 * HOUR, "down", 10),
      run(key, now - HOUR, "up", 10),
      run(key, now - 60_000, "degraded", 10),
    ]);
    // The schedule row as the runner leaves it: degraded since the last run, up before it.
    await sql`insert into probe_schedule
                (probe_key, next_due_at, last_outcome, last_run_at, state, state_since)
              values (${key}, now(), 'degraded', ${new Date(now - 60_000)}, 'degraded',
                      ${new Date(now - 60_000)})`.execute(t.app.database.db);
    // And the probe's verdict, as the runner decides it from its locations' rows.
    await sql`insert into probe_verdicts (probe_key, state, state_since)
              values (${key}, 'degraded', ${new Date(now - 60_000)})`.execute(t.app.database.db);
    const res = await t.api.get(`/api/v1/projects/${project}/status`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.meta, { count: 2, status: "enabled" });
    assert.deepEqual(res.body.data[0], {
      probe_id: res.body.data[0].probe_id,
      url: "https://a.example.test/",
      method: "GET",
      label: null,
      state: "degraded",
      state_since: new Date(now - 60_000).toISOString(),
      last_outcome: "degraded",
      last_run_at: new Date(now - 60_000).toISOString(),
      runs_24h: 3,
      uptime_24h: 2 / 3,
    });
    assert.deepEqual(res.body.data[1], {
      probe_id: other.body.data.probe_id,
      url: "https://b.example.test/",
      method: "GET",
      label: "B",
      state: "unknown",
      state_since: null,
      last_outcome: null,
      last_run_at: null,
      runs_24h: 0,
      uptime_24h: null,
    });
  });

  test("a real run is recorded as answered, and the board shows the probe up since it", async (t) => {
    const target = await startTarget();
    try {
      const { project, probeId, path } = await probeOf(t, `${target.origin}/ok`);
      await t.api.patch(path, { expect: { status: [200] } });
      const failing = await t.api.post(`/api/v1/projects/${project}/probes`, {
        url: `${target.origin}/status/500`,
      });
      const failingPath = `/api/v1/projects/${project}/probes/${failing.body.data.probe_id}`;

      const ran = await t.api.post(`${path}/run`);
      assert.equal(ran.status, 200, ran.text);
      const result = ran.body.data;
      assert.deepEqual({ ...result, started_at: "", duration_ms: 0 }, {
        started_at: "",
        duration_ms: 0,
        outcome: "up",
        http_status: 200,
        error: null,
        address: "127.0.0.1",
        failed_checks: [],
        location: "local",
        trigger: "manual",
        in_maintenance: false,
      });
      assert.deepEqual((await t.api.get(`${path}/results`)).body.data, [result]);
      const down = (await t.api.post(`${failingPath}/run`)).body.data;
      assert.deepEqual(
        [down.outcome, down.failed_checks, down.trigger, down.in_maintenance],
        ["down", null, "manual", false],
        "without expect, no checks",
      );

      const s = (await t.api.get(`${path}/stats?window=1h`)).body.data;
      assert.deepEqual([s.runs, s.up, s.maintenance, s.uptime], [1, 1, 0, 1]);
      const board = (await t.api.get(`/api/v1/projects/${project}/status`)).body.data;
      assert.deepEqual(board.find((p: { probe_id: string }) => p.probe_id === probeId), {
        probe_id: probeId,
        url: `${target.origin}/ok`,
        method: "GET",
        label: null,
        state: "up",
        state_since: result.started_at,
        last_outcome: "up",
        last_run_at: result.started_at,
        runs_24h: 1,
        uptime_24h: 1,
      });
      // One failing run is below the default failure_threshold (3): not down yet.
      const other = board.find((p: { url: string }) => p.url.endsWith("/status/500"));
      assert.deepEqual(
        [other.state, other.state_since, other.last_outcome, other.runs_24h, other.uptime_24h],
        ["unknown", null, "down", 1, 0],
      );
    } finally {
      await target.close();
    }
  });

  test("a deleted probe's history is removed by the pruner, in batches", async (t) => {
    const { key, path } = await probeOf(t);
    const db = t.app.database.db;
    const now = Date.now();
    await insertRuns(
      db,
      "test",
      Array.from({ length: 25 }, (_, i) => run(key, now - i * HOUR, "up", 5)),
    );
    assert.equal((await t.api.delete(path)).status, 204);
    assert.equal(await count(db, "probe_results", key), 25, "deleting does not wait for history");
    const report = await pruneOnce(db, {
      now,
      retentionDays: 7,
      batch: 10,
      pause: () => Promise.resolve(),
    });
    assert.ok(report.probes >= 1);
    assert.equal(await count(db, "probe_results", key), 0);
    assert.equal(await count(db, "probe_rollups", key), 0);
    const tomb = await db.selectFrom("probe_tombstones").select("probe_key").where(
      "probe_key",
      "=",
      key,
    )
      .execute();
    assert.equal(tomb.length, 0);
  });

  test("the same procedures answer on /trpc", async (t) => {
    const { project, probeId } = await probeOf(t);
    const input = encodeURIComponent(JSON.stringify({ project, probeId, window: "7d" }));
    const res = await t.api.get(`/trpc/results.stats?input=${input}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.result.data.data.window, "7d");
    const status = await t.api.get(
      `/trpc/results.status?input=${encodeURIComponent(JSON.stringify({ project }))}`,
    );
    assert.equal(status.body.result.data.meta.count, 1);
  });
});

Deno.test("the OpenAPI document lists the results paths", () => {
  const doc = generateOpenApiDocument(appRouter, {
    title: "probe",
    version: "1",
    baseUrl: "http://x/api/v1",
  });
  const paths = Object.keys(doc.paths ?? {});
  for (
    const p of [
      "/projects/{project}/probes/{probeId}/results",
      "/projects/{project}/probes/{probeId}/stats",
      "/projects/{project}/status",
    ]
  ) {
    assert.ok(paths.includes(p), p);
  }
});
