/**
 * A probe's series (`GET …/series`, `results.series`): runs recorded as a runner records them
 * (`claimDue`, then `recordRuns`) at chosen times for the 5-minute buckets of 24 hours, and
 * rollups written at chosen hours for the hourly and daily buckets. Every case runs on PGlite
 * and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import type { Outcome, SeriesBucket } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { bucketOf, emptyHistogram } from "./histogram.ts";
import { claimDue, recordRuns, releaseLeases, syncSchedules } from "../runner/store.ts";
import { apiSuite, type TestContext, uniqueName } from "../testing/app.ts";
import { probeSeries } from "./series.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const H = Date.parse("2026-11-20T12:00:00Z");
/** Inside a 5-minute bucket, not at its start. */
const NOW = H + 32 * MINUTE;
const RUNNER = "series-test";

interface MadeRun {
  at: number;
  outcome: Outcome;
  ms?: number;
}

/**
 * Records made-up runs of one probe as the runner does, in time order: claimed when due
 * (`claimDue`), recorded (`recordRuns`); other tests' probes claimed on the way are given back.
 */
async function record(db: Db, key: string, runs: MadeRun[]) {
  for (const { at, outcome, ms = 10 } of [...runs].sort((a, b) => a.at - b.at)) {
    await syncSchedules(db, { now: at, intervalMs: MINUTE });
    const claimed = await claimDue(db, {
      now: at,
      horizon: at,
      leaseUntil: at + MINUTE,
      runner: RUNNER,
      limit: 100_000,
    });
    const mine = claimed.find((c) => c.key === key);
    assert.ok(mine, `the probe was due at ${new Date(at).toISOString()}`);
    await recordRuns(db, RUNNER, [{
      key,
      due: mine.due,
      nextDue: at + 1,
      inMaintenance: mine.inMaintenance,
      result: {
        startedAt: new Date(at),
        durationMs: ms,
        outcome,
        httpStatus: outcome === "blocked" ? null : outcome === "down" ? 500 : 200,
        error: outcome === "down" ? "HTTP 500" : outcome === "blocked" ? "blocked" : null,
        address: "192.0.2.1",
      },
    }]);
    await releaseLeases(db, RUNNER, claimed.filter((c) => c !== mine).map((c) => c.key));
  }
}

/** A rollup row at `hour` with these counts and latencies, as left once raw results are pruned. */
async function rollup(
  db: Db,
  key: string,
  hour: number,
  counts: Partial<Record<Outcome | "maintenance", number>>,
  latencies: number[] = [],
) {
  const latency_buckets = emptyHistogram();
  for (const ms of latencies) latency_buckets[bucketOf(ms)]++;
  await db.insertInto("probe_rollups").values({
    probe_key: key,
    hour: new Date(hour),
    ...counts,
    latency_count: latencies.length,
    latency_max: latencies.length ? Math.max(...latencies) : null,
    latency_buckets,
  }).execute();
}

/** A project with one probe: its path, REST path and internal key. */
async function probeOf({ api, app }: TestContext) {
  const project = uniqueName("se");
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  const res = await api.post(`/api/v1/projects/${project}/probes`, {
    url: "https://series.example.test/",
  });
  const probeId: string = res.body.data.probe_id;
  const { key } = await app.database.db.selectFrom("probes").select("key")
    .where("project", "=", project).where("probe_id", "=", probeId).executeTakeFirstOrThrow();
  return {
    project,
    probeId,
    key: String(key),
    path: `/api/v1/projects/${project}/probes/${probeId}/series`,
  };
}

const empty = (start: number): SeriesBucket => ({
  start: new Date(start).toISOString(),
  runs: 0,
  up: 0,
  degraded: 0,
  down: 0,
  blocked: 0,
  maintenance: 0,
  uptime: null,
  p50: null,
  p95: null,
  max: null,
});

/** The buckets that hold anything, by index. */
const filled = (buckets: SeriesBucket[]) =>
  Object.fromEntries(
    buckets.flatMap((b, i) => (b.runs + b.blocked + b.maintenance > 0 ? [[i, b]] : [])),
  );

const trpcQuery = (path: string, input: unknown) =>
  `/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`;

apiSuite("a probe's series", (test) => {
  test("24h: 288 five-minute buckets from raw results, exact percentiles, maintenance apart", async (t) => {
    const db = t.app.database.db;
    const { project, probeId, key } = await probeOf(t);
    const first = H + 30 * MINUTE - 287 * 5 * MINUTE;
    const tenth = first + 10 * 5 * MINUTE;
    const maintenanceAt = tenth + 4 * MINUTE;
    assert.equal(
      (await t.api.post(`/api/v1/projects/${project}/maintenance`, {
        starts_at: new Date(maintenanceAt).toISOString(),
        ends_at: new Date(maintenanceAt + 1000).toISOString(),
      })).status,
      201,
    );
    const runs: MadeRun[] = [
      { at: first - 1, outcome: "down", ms: 70_000 }, // before the window
      { at: first, outcome: "up", ms: 7 }, // the first bucket's first moment
      { at: tenth + 3 * MINUTE, outcome: "blocked", ms: 9999 }, // no response: no latency
      { at: maintenanceAt, outcome: "down", ms: 5000 },
      { at: tenth + 5 * MINUTE, outcome: "up", ms: 3 }, // the next bucket's first moment
      { at: NOW - MINUTE, outcome: "degraded", ms: 40 }, // the current bucket
    ];
    // 1 to 20 ms in the tenth bucket; the slowest one an HTTP 500.
    for (let ms = 1; ms <= 20; ms++) {
      runs.push({ at: tenth + ms * 5000, outcome: ms === 20 ? "down" : "up", ms });
    }
    await record(db, key, runs);

    const series = await probeSeries({ db, input: { project, probeId, window: "24h" }, now: NOW });
    assert.equal(series.buckets.length, 288);
    assert.deepEqual(
      { ...series, buckets: undefined },
      {
        window: "24h",
        bucket_seconds: 300,
        since: new Date(first).toISOString(),
        until: new Date(NOW).toISOString(),
        buckets: undefined,
        percentiles: "exact",
        // The run before the window is the oldest the service holds.
        history_since: new Date(first - 1).toISOString(),
      },
    );
    series.buckets.forEach((b, i) => assert.equal(b.start, empty(first + i * 5 * MINUTE).start));
    assert.deepEqual(filled(series.buckets), {
      0: { ...empty(first), runs: 1, up: 1, uptime: 1, p50: 7, p95: 7, max: 7 },
      10: {
        ...empty(tenth),
        // The blocked run and the one in maintenance apart.
        runs: 20,
        up: 19,
        down: 1,
        blocked: 1,
        maintenance: 1,
        uptime: 19 / 20,
        // Nearest rank over the 21 responses (1 to 20 ms and the 5 s one in maintenance).
        p50: 11,
        p95: 20,
        max: 5000,
      },
      11: { ...empty(tenth + 5 * MINUTE), runs: 1, up: 1, uptime: 1, p50: 3, p95: 3, max: 3 },
      287: {
        ...empty(H + 30 * MINUTE),
        runs: 1,
        degraded: 1,
        uptime: 1,
        p50: 40,
        p95: 40,
        max: 40,
      },
    });
  });

  test("1h and 6h: one-minute and 5-minute buckets from raw results; history_since", async (t) => {
    const db = t.app.database.db;
    const { project, probeId, key } = await probeOf(t);
    const none = await probeSeries({ db, input: { project, probeId, window: "1h" }, now: NOW });
    assert.equal(none.history_since, null);
    assert.equal(none.buckets.length, 60);
    assert.ok(none.buckets.every((b) => b.runs === 0));

    // A probe five minutes old: runs at NOW - 5 min, - 3 min and in the current minute.
    const minute = Math.floor(NOW / MINUTE) * MINUTE;
    await record(db, key, [
      { at: NOW - 5 * MINUTE, outcome: "up", ms: 20 },
      { at: NOW - 3 * MINUTE, outcome: "down", ms: 30 },
      { at: minute + 1, outcome: "up", ms: 10 },
    ]);
    const hour = await probeSeries({ db, input: { project, probeId, window: "1h" }, now: NOW });
    assert.deepEqual(
      { ...hour, buckets: undefined },
      {
        window: "1h",
        bucket_seconds: 60,
        since: new Date(minute - 59 * MINUTE).toISOString(),
        until: new Date(NOW).toISOString(),
        buckets: undefined,
        percentiles: "exact",
        history_since: new Date(NOW - 5 * MINUTE).toISOString(),
      },
    );
    assert.equal(hour.buckets.length, 60);
    const at = (ms: number) => new Date(Math.floor(ms / MINUTE) * MINUTE).getTime();
    assert.deepEqual(filled(hour.buckets), {
      54: { ...empty(at(NOW - 5 * MINUTE)), runs: 1, up: 1, uptime: 1, p50: 20, p95: 20, max: 20 },
      56: {
        ...empty(at(NOW - 3 * MINUTE)),
        runs: 1,
        down: 1,
        uptime: 0,
        p50: 30,
        p95: 30,
        max: 30,
      },
      59: { ...empty(minute), runs: 1, up: 1, uptime: 1, p50: 10, p95: 10, max: 10 },
    });

    const six = await probeSeries({ db, input: { project, probeId, window: "6h" }, now: NOW });
    assert.equal(six.buckets.length, 72);
    assert.equal(six.bucket_seconds, 300);
    assert.equal(six.percentiles, "exact");
    const fifth = Math.floor(NOW / (5 * MINUTE)) * 5 * MINUTE;
    assert.equal(six.since, new Date(fifth - 71 * 5 * MINUTE).toISOString());
    // NOW is 2 minutes into its 5-minute bucket: the runs 3 and 5 minutes before fall in the
    // bucket before it.
    assert.deepEqual(
      Object.entries(filled(six.buckets)).map(([i, b]) => [Number(i), b.runs, b.down]),
      [[70, 2, 1], [71, 1, 0]],
    );
  });

  test("history_since: the hour of the oldest rollup once older raw results are pruned", async (t) => {
    const db = t.app.database.db;
    const { project, probeId, key } = await probeOf(t);
    await record(db, key, [{ at: NOW - 2 * MINUTE, outcome: "up" }]);
    // A rollup 40 days back, its raw results gone: the history starts at its hour.
    await rollup(db, key, H - 40 * DAY, { up: 2 }, [5, 5]);
    const series = await probeSeries({ db, input: { project, probeId, window: "7d" }, now: NOW });
    assert.equal(series.history_since, new Date(H - 40 * DAY).toISOString());
  });

  test("7d: 168 hourly buckets from rollups, percentiles estimated, max exact", async (t) => {
    const db = t.app.database.db;
    const { project, probeId, key } = await probeOf(t);
    const first = H - 167 * HOUR;
    await rollup(db, key, first - HOUR, { down: 9 }, [60_000]); // before the window
    await rollup(db, key, first, { up: 3, down: 1, maintenance: 2 }, [10, 10, 10, 2900]);
    await rollup(db, key, H, { blocked: 2 });
    const series = await probeSeries({ db, input: { project, probeId, window: "7d" }, now: NOW });
    assert.equal(series.buckets.length, 168);
    assert.equal(series.bucket_seconds, 3600);
    assert.equal(series.since, new Date(first).toISOString());
    assert.equal(series.percentiles, "estimated");
    assert.deepEqual(filled(series.buckets), {
      0: {
        ...empty(first),
        runs: 4,
        up: 3,
        down: 1,
        maintenance: 2,
        uptime: 3 / 4,
        // Rank 2 of 4 lies in (8, 10] ms, two thirds in; rank 4 in (2500, 3000], bounded by
        // the hour's max.
        p50: 9,
        p95: 2900,
        max: 2900,
      },
      // Blocked runs only: no counted run, no uptime.
      167: { ...empty(H), blocked: 2 },
    });
  });

  test("30d: daily UTC buckets, each merging its hours' histograms", async (t) => {
    const db = t.app.database.db;
    const { project, probeId, key } = await probeOf(t);
    const today = Date.parse("2026-11-20T00:00:00Z");
    const first = today - 29 * DAY;
    const day = today - 5 * DAY;
    // The last hour of a day and the first of the next fall in two buckets.
    await rollup(db, key, day - HOUR, { up: 1 }, [50]);
    await rollup(db, key, day, { up: 10 }, new Array(10).fill(10));
    await rollup(db, key, day + 23 * HOUR, { up: 8, degraded: 1, down: 1 }, [
      ...new Array(10).fill(2950),
    ]);
    await rollup(db, key, first - HOUR, { down: 7 }); // before the window
    const series = await probeSeries({ db, input: { project, probeId, window: "30d" }, now: NOW });
    assert.equal(series.buckets.length, 30);
    assert.equal(series.bucket_seconds, 86_400);
    assert.equal(series.since, new Date(first).toISOString());
    assert.equal(series.until, new Date(NOW).toISOString());
    assert.deepEqual(filled(series.buckets), {
      23: { ...empty(day - DAY), runs: 1, up: 1, uptime: 1, p50: 50, p95: 50, max: 50 },
      24: {
        ...empty(day),
        runs: 20,
        up: 18,
        degraded: 1,
        down: 1,
        uptime: 19 / 20,
        // 20 responses: rank 10 at the top of (8, 10] ms; rank 19 nine tenths into
        // (2500, 2950], the day's max.
        p50: 10,
        p95: 2905,
        max: 2950,
      },
    });
    assert.equal(series.buckets[29].start, new Date(today).toISOString());
  });

  test("90d: 90 daily buckets, the oldest 89 days before today's", async (t) => {
    const db = t.app.database.db;
    const { project, probeId, key } = await probeOf(t);
    const today = Date.parse("2026-11-20T00:00:00Z");
    const first = today - 89 * DAY;
    await rollup(db, key, first - HOUR, { down: 1 });
    await rollup(db, key, first, { up: 1, down: 1 });
    await rollup(db, key, H, { up: 4 }, [100, 100, 100, 100]);
    const series = await probeSeries({ db, input: { project, probeId, window: "90d" }, now: NOW });
    assert.equal(series.buckets.length, 90);
    assert.deepEqual(filled(series.buckets), {
      0: { ...empty(first), runs: 2, up: 1, down: 1, uptime: 0.5 },
      // Estimated: rank 2 of 4 lies halfway into (80, 100] ms.
      89: { ...empty(today), runs: 4, up: 4, uptime: 1, p50: 90, p95: 100, max: 100 },
    });
  });

  test("REST and /trpc answer the same series; 24h is the default", async (t) => {
    const { project, probeId, key, path } = await probeOf(t);
    await record(t.app.database.db, key, [{ at: Date.now() - 1000, outcome: "up", ms: 12 }]);
    const rest = await t.api.get(path);
    assert.equal(rest.status, 200);
    assert.equal(rest.headers.get("cache-control"), "no-store");
    const { data } = rest.body;
    assert.equal(data.window, "24h");
    assert.equal(data.buckets.length, 288);
    assert.deepEqual(
      data.buckets.filter((b: SeriesBucket) => b.runs > 0).map((b: SeriesBucket) => [b.up, b.p95]),
      [[1, 12]],
    );
    const last = Date.parse(data.buckets[287].start);
    assert.ok(last <= Date.parse(data.until) && Date.parse(data.until) < last + 5 * MINUTE);

    for (const window of ["1h", "6h", "7d", "30d", "90d"]) {
      const res = await t.api.get(`${path}?window=${window}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.window, window);
      assert.equal(res.body.data.buckets.filter((b: SeriesBucket) => b.runs > 0).length, 1);
    }
    const trpc = await t.api.get(trpcQuery("results.series", { project, probeId, window: "7d" }));
    assert.equal(trpc.status, 200);
    const again = await t.api.get(`${path}?window=7d`);
    assert.deepEqual(
      { ...trpc.body.result.data.data, until: null },
      { ...again.body.data, until: null },
    );
  });

  test("a missing probe is a 404 and a window not offered a 422 naming it, on both", async (t) => {
    const { project, probeId, path } = await probeOf(t);
    const missing = await t.api.get(`/api/v1/projects/${project}/probes/nope/series`);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { error: { code: "not_found", message: "Probe not found" } });
    const noProject = await t.api.get(`/api/v1/projects/${uniqueName()}/probes/${probeId}/series`);
    assert.equal(noProject.status, 404);
    const trpcMissing = await t.api.get(
      trpcQuery("results.series", { project, probeId: "nope", window: "90d" }),
    );
    assert.equal(trpcMissing.status, 404);
    assert.deepEqual(trpcMissing.body.error.data.error, missing.body.error);

    const bad = await t.api.get(`${path}?window=1y`);
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.code, "validation_failed");
    assert.deepEqual(bad.body.error.details.map((d: { path: string }) => d.path), ["window"]);
    const trpcBad = await t.api.get(
      trpcQuery("results.series", { project, probeId, window: "2h" }),
    );
    assert.equal(trpcBad.status, 422);
    assert.equal(trpcBad.body.error.data.error.details[0].path, "window");
    assert.equal((await t.api.get(path, { key: null })).status, 401);
  });
});
