/**
 * The dashboard's overview (`GET /api/v1/overview`, `overview.get`), with runs recorded as a
 * runner records them (`claimDue`, then `recordRuns`) at chosen times, and rollups written at
 * chosen hours where raw results would have been pruned. Every case runs on PGlite and, with
 * TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import type { Outcome } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { sql } from "kysely";
import { BUCKET_BOUNDS, bucketOf, emptyHistogram } from "./histogram.ts";
import { claimDue, recordRuns, releaseLeases, syncSchedules } from "../runner/store.ts";
import { apiSuite, type TestContext, uniqueName } from "../testing/app.ts";
import { BUCKET_THRESHOLDS, getOverview, SPARKLINE_HOURS } from "./overview.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Half past an hour, so that every window starts with a part hour. */
const H = Date.parse("2026-11-20T12:00:00Z");
const NOW = H + 30 * MINUTE;
const RUNNER = "overview-test";

interface MadeRun {
  key: string;
  at: number;
  outcome: Outcome;
  ms?: number;
  /** The location that makes it, as stored: '' (the default) for the built-in one. */
  location?: string;
}

/**
 * Records made-up runs as the runner does, moment by moment in time order: the probes due are
 * claimed (`claimDue`), these runs recorded (`recordRuns`: raw result, hourly rollup, state,
 * incidents), and the other tests' probes claimed on the way given back untouched.
 */
async function record(db: Db, runs: MadeRun[]) {
  const moments = [...new Set(runs.map((r) => r.at))].sort((a, b) => a - b);
  const places = [...new Set(runs.map((r) => r.location ?? ""))];
  for (const [at, location] of moments.flatMap((at) => places.map((l) => [at, l] as const))) {
    const now = runs.filter((r) => r.at === at && (r.location ?? "") === location);
    if (now.length === 0) continue;
    await syncSchedules(db, { now: at, intervalMs: MINUTE });
    const claimed = await claimDue(db, {
      location,
      now: at,
      horizon: at,
      leaseUntil: at + MINUTE,
      runner: RUNNER,
      limit: 100_000,
    });
    const mine = claimed.filter((c) => now.some((r) => r.key === c.key));
    assert.equal(mine.length, now.length, `every probe of the moment ${at} was due`);
    await recordRuns(
      db,
      RUNNER,
      mine.map((c) => {
        const { outcome, ms = 10 } = now.find((r) => r.key === c.key)!;
        return {
          key: c.key,
          due: c.due,
          nextDue: at + 1,
          inMaintenance: c.inMaintenance,
          result: {
            startedAt: new Date(at),
            durationMs: ms,
            outcome,
            httpStatus: outcome === "blocked" ? null : outcome === "down" ? 500 : 200,
            error: outcome === "down" ? "HTTP 500" : outcome === "blocked" ? "blocked" : null,
            address: "192.0.2.1",
          },
        };
      }),
      location,
    );
    await releaseLeases(
      db,
      RUNNER,
      claimed.filter((c) => !mine.includes(c)).map((c) => c.key),
      undefined,
      location,
    );
  }
}

/** A rollup row at `hour`, as the runner leaves it once the raw results are pruned. */
async function rollup(db: Db, key: string, hour: number, counts: Partial<Record<Outcome, number>>) {
  await db.insertInto("probe_rollups").values({
    probe_key: key,
    hour: new Date(hour),
    ...counts,
    latency_buckets: emptyHistogram(),
  }).execute();
}

/** A new project with probes for these URLs (and labels); answers their ids and keys. */
async function projectWith(
  { api, app }: TestContext,
  probes: { url: string; label?: string }[],
) {
  const project = uniqueName("ov");
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  const made = [];
  for (const probe of probes) {
    const res = await api.post(`/api/v1/projects/${project}/probes`, probe);
    assert.equal(res.status, 201, res.text);
    const { key } = await app.database.db.selectFrom("probes").select("key")
      .where("project", "=", project).where("probe_id", "=", res.body.data.probe_id)
      .executeTakeFirstOrThrow();
    made.push({ probeId: res.body.data.probe_id as string, key: String(key), url: probe.url });
  }
  return { project, probes: made };
}

const trpcQuery = (path: string, input: unknown) =>
  `/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`;

apiSuite("the overview", (test) => {
  test("uptime counts whole hours from rollups and a window's first part hour from raw results, maintenance apart", async (t) => {
    const db = t.app.database.db;
    const { project, probes: [p] } = await projectWith(t, [{ url: "https://a.example.test/" }]);
    const key = p.key;
    // Runs at chosen times; maintenance windows cover three failing runs.
    for (
      const [from, to] of [[NOW - DAY + 12 * MINUTE, NOW - DAY + 14 * MINUTE], [
        NOW - 90 * MINUTE,
        NOW - HOUR,
      ]]
    ) {
      const window = {
        starts_at: new Date(from).toISOString(),
        ends_at: new Date(to).toISOString(),
      };
      assert.equal(
        (await t.api.post(`/api/v1/projects/${project}/maintenance`, window)).status,
        201,
      );
    }
    await record(db, [
      { key, at: NOW - 7 * DAY - 5 * MINUTE, outcome: "down" }, // before 7 days, in its first hour
      { key, at: NOW - 7 * DAY + 5 * MINUTE, outcome: "up" }, // 7 days' first part hour
      { key, at: NOW - DAY - 10 * MINUTE, outcome: "down" }, // before 24 hours, in its first hour
      { key, at: NOW - DAY + 10 * MINUTE, outcome: "down" }, // 24 hours' first part hour
      { key, at: NOW - DAY + 13 * MINUTE, outcome: "down" }, // maintenance, there too
      { key, at: NOW - 2 * HOUR, outcome: "up" },
      { key, at: NOW - 80 * MINUTE, outcome: "down" }, // maintenance
      { key, at: NOW - 70 * MINUTE, outcome: "down" }, // maintenance
      { key, at: NOW - 10 * MINUTE, outcome: "degraded" },
    ]);
    // Hours whose raw results are gone: 40 days back (out), 30 days back (its first part hour:
    // out, no raw results), the first whole hour of 30 days (in), 10 days back (in).
    await rollup(db, key, H - 40 * DAY, { down: 5 });
    await rollup(db, key, H - 30 * DAY, { down: 3 });
    await rollup(db, key, H + HOUR - 30 * DAY, { up: 2 });
    await rollup(db, key, H - 10 * DAY, { up: 6, down: 2 });

    const { data, meta } = await getOverview({ db, project, now: NOW });
    assert.deepEqual(meta, { projects: 1, probes: 1, generated_at: new Date(NOW).toISOString() });
    const [probe] = data.projects[0].probes;
    // 24h: down (first part hour), up, degraded.
    assert.equal(probe.uptime_24h, 2 / 3);
    // 7d: up (first part hour), down, down, up, degraded.
    assert.equal(probe.uptime_7d, 3 / 5);
    // 30d: up 2 + up 6, down 2 + the hour 7 days back: down, up + down, down + up + degraded.
    assert.equal(probe.uptime_30d, 11 / 16);
    assert.deepEqual(probe, {
      probe_id: p.probeId,
      label: null,
      url: "https://a.example.test/",
      method: "GET",
      state: "degraded",
      state_since: new Date(NOW - 10 * MINUTE).toISOString(),
      last_outcome: "degraded",
      last_run_at: new Date(NOW - 10 * MINUTE).toISOString(),
      blocked_reason: null,
      uptime_24h: 2 / 3,
      uptime_7d: 3 / 5,
      uptime_30d: 11 / 16,
      p95_24h: 10,
      // Hour by hour up to the current one: up 2 hours back, only maintenance the hour before
      // (no counted run: null), degraded in the current hour.
      sparkline: [...new Array(21).fill(null), 1, null, 1],
      // The oldest hour counted in 30 days: the first whole one.
      history_since: new Date(H + HOUR - 30 * DAY).toISOString(),
      // Its runs of the last 24 hours, oldest first, those in a maintenance window as such.
      recent_runs: ["down", "maintenance", "up", "maintenance", "maintenance", "degraded"],
      last_duration_ms: 10,
    });
  });

  test("the sparkline is the last 24 hours, oldest first: null without counted runs", async (t) => {
    const db = t.app.database.db;
    const { project, probes: [p] } = await projectWith(t, [{ url: "https://s.example.test/" }]);
    await record(db, [
      { key: p.key, at: H - 24 * HOUR + 5 * MINUTE, outcome: "down" }, // before the first hour
      { key: p.key, at: H - 23 * HOUR, outcome: "up" }, // the first hour's first moment
      { key: p.key, at: H - 23 * HOUR + 59 * MINUTE, outcome: "down" },
      { key: p.key, at: H - 12 * HOUR, outcome: "blocked" }, // apart: no counted run
      { key: p.key, at: H + 29 * MINUTE, outcome: "up" },
    ]);
    const [probe] = (await getOverview({ db, project, now: NOW })).data.projects[0].probes;
    assert.equal(probe.sparkline.length, SPARKLINE_HOURS);
    const expected = new Array(SPARKLINE_HOURS).fill(null);
    expected[0] = 0.5;
    expected[23] = 1;
    assert.deepEqual(probe.sparkline, expected);
    // Less than 30 days of history: its oldest hour says so.
    assert.equal(probe.history_since, new Date(H - 24 * HOUR).toISOString());
  });

  test("a probe with two locations has one figure per hour, their runs counted together, on every read", async (t) => {
    const db = t.app.database.db;
    const office = await t.api.post("/api/v1/locations", { name: uniqueName("office") });
    assert.equal(office.status, 201, office.text);
    const remote: string = office.body.data.name;
    const { project, probes: [p] } = await projectWith(t, [{ url: "https://two.example.test/" }]);
    const path = `/api/v1/projects/${project}/probes/${p.probeId}`;
    const moved = await t.api.patch(path, { locations: ["local", remote] });
    assert.equal(moved.status, 200, moved.text);
    // Two whole hours before the current one, so that the reads below (at the real time) see
    // them whatever the minute: the locations disagree in each. An hour ending during the reads
    // would move them a bucket: in its last 30 s, the test waits for the next.
    const leftOfHour = HOUR - (Date.now() % HOUR);
    if (leftOfHour < 30_000) await new Promise((resolve) => setTimeout(resolve, leftOfHour + 10));
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    const [two, one] = [hour - 2 * HOUR, hour - HOUR];
    await record(db, [
      { key: p.key, at: two + MINUTE, outcome: "up" },
      { key: p.key, at: two + 2 * MINUTE, outcome: "up" },
      { key: p.key, at: two + 3 * MINUTE, outcome: "up" },
      { key: p.key, at: two + MINUTE, outcome: "down", location: remote },
      { key: p.key, at: one + MINUTE, outcome: "down" },
      { key: p.key, at: one + MINUTE, outcome: "up", location: remote },
      { key: p.key, at: one + 2 * MINUTE, outcome: "up", location: remote },
    ]);
    const reads = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.api.get(`/api/v1/overview?project=${project}`);
      assert.equal(res.status, 200);
      const [probe] = res.body.data.projects[0].probes;
      reads.push({ sparkline: probe.sparkline, uptime_24h: probe.uptime_24h });
    }
    const expected = new Array(SPARKLINE_HOURS).fill(null);
    expected[SPARKLINE_HOURS - 3] = 3 / 4; // local 3 of 3 up, the office 0 of 1
    expected[SPARKLINE_HOURS - 2] = 2 / 3; // local 0 of 1, the office 2 of 2
    assert.deepEqual(reads, new Array(5).fill({ sparkline: expected, uptime_24h: 5 / 7 }));
    // The probe's statistics count the same way; each location's stay its own.
    const stats = async (query: string) => (await t.api.get(`${path}/stats?${query}`)).body.data;
    assert.deepEqual((await stats("window=24h")).uptime, 5 / 7);
    assert.deepEqual((await stats("window=24h&location=local")).uptime, 3 / 4);
    assert.deepEqual((await stats(`window=24h&location=${remote}`)).uptime, 2 / 3);
    // And so do the probe page's hourly buckets.
    const series = (await t.api.get(`${path}/series?window=7d`)).body.data.buckets;
    assert.deepEqual(series.slice(-3, -1).map((b: { uptime: number }) => b.uptime), [3 / 4, 2 / 3]);
  });

  test("history_since of a probe made minutes ago is its creation, not its first hour's start", async (t) => {
    const db = t.app.database.db;
    const { project, probes: [p] } = await projectWith(t, [{ url: "https://new.example.test/" }]);
    const { created_at } = await db.selectFrom("probes")
      .select(sql<Date>`created_at`.as("created_at"))
      .where("key", "=", p.key).executeTakeFirstOrThrow();
    const created = new Date(created_at).getTime();
    const now = created + 5 * MINUTE;
    await record(db, [{ key: p.key, at: created + 1000, outcome: "up" }]);
    const [probe] = (await getOverview({ db, project, now })).data.projects[0].probes;
    // The run's hour starts before the probe was made (unless it was made on the hour).
    const hour = Math.floor((created + 1000) / HOUR) * HOUR;
    assert.equal(probe.history_since, new Date(Math.max(hour, created)).toISOString());
    assert.equal(probe.uptime_7d, 1);
  });

  test("p95 over 24 hours merges the hours' histograms with the first part hour's raw results", async (t) => {
    const db = t.app.database.db;
    const { project, probes: [p, quiet] } = await projectWith(t, [
      { url: "https://lat.example.test/" },
      { url: "https://lat.example.test/blocked" },
    ]);
    const runs: MadeRun[] = [
      // Before the window: not counted, though its hour's rollup holds it.
      { key: p.key, at: NOW - DAY - MINUTE, outcome: "up", ms: 60_000 },
      // The window's first part hour: from raw results.
      { key: p.key, at: NOW - DAY + MINUTE, outcome: "up", ms: 3000 },
      { key: p.key, at: NOW - DAY + 2 * MINUTE, outcome: "up", ms: 3000 },
      // No response: no latency.
      { key: p.key, at: NOW - 5 * HOUR, outcome: "blocked", ms: 50_000 },
      { key: quiet.key, at: NOW - 5 * HOUR, outcome: "blocked", ms: 50_000 },
    ];
    for (let i = 0; i < 10; i++) {
      runs.push({ key: p.key, at: NOW - 10 * HOUR + i * MINUTE, outcome: "up", ms: 10 });
    }
    await record(db, runs);
    const [probe, blocked] = (await getOverview({ db, project, now: NOW })).data.projects[0].probes
      .sort((a, b) => a.url.length - b.url.length);
    // 12 responses: 10 of 10 ms, 2 of 3 s; rank 12 lies in the 3 s bucket, at its top.
    assert.equal(probe.p95_24h, 3000);
    // The blocked run is apart: not a failure.
    assert.equal(probe.uptime_24h, 1);
    assert.equal(blocked.p95_24h, null);
    assert.equal(blocked.uptime_24h, null);
    assert.equal(blocked.blocked_reason, "blocked");
    assert.equal(blocked.state, "unknown", "one failing run is not enough to be down");
  });

  test("raw latencies fall in the histogram buckets the runner gives them, at every bound", async (t) => {
    const values = [0, ...BUCKET_BOUNDS.filter(Number.isFinite).flatMap((b) => [b, b + 1])];
    const { rows } = await sql<{ ms: number; bucket: number }>`
      select v as ms, width_bucket(v, ${BUCKET_THRESHOLDS}) as bucket
      from unnest(${sql.raw(`array[${values.join(",")}]`)}::int[]) as v`
      .execute(t.app.database.db);
    assert.deepEqual(rows.map((r) => [r.ms, r.bucket]), values.map((ms) => [ms, bucketOf(ms)]));
  });

  test("probes run down first, then degraded, unknown, up; then by label or URL", async (t) => {
    const db = t.app.database.db;
    const { project, probes } = await projectWith(t, [
      { url: "https://e.example.test/" },
      { url: "https://0.example.test/", label: "beta" },
      { url: "https://a.example.test/", label: "Alpha" },
      { url: "https://b.example.test/" },
      { url: "https://c.example.test/" },
      { url: "https://d.example.test/", label: "zeta" },
    ]);
    const [e, beta, alpha, b, c, zeta] = probes;
    const plan: [typeof e, Outcome[]][] = [
      [e, ["up", "up", "up"]],
      [beta, ["up", "up", "up"]],
      [alpha, ["down", "up", "up"]],
      [c, ["up", "up", "degraded"]],
      [zeta, ["down", "down", "down"]],
    ];
    await record(
      db,
      plan.flatMap(([probe, outcomes]) =>
        outcomes.map((outcome, i) => ({ key: probe.key, at: NOW - (3 - i) * MINUTE, outcome }))
      ),
    );
    const { data } = await getOverview({ db, project, now: NOW });
    assert.deepEqual(
      data.projects[0].probes.map((p) => [p.state, p.label ?? p.url]),
      [
        ["down", "zeta"],
        ["degraded", "https://c.example.test/"],
        ["unknown", "https://b.example.test/"],
        ["up", "Alpha"],
        ["up", "beta"],
        ["up", "https://e.example.test/"],
      ],
    );
    const never = data.projects[0].probes[2];
    assert.deepEqual(
      [
        never.probe_id,
        never.last_run_at,
        never.uptime_24h,
        never.p95_24h,
        never.sparkline,
        never.history_since,
      ],
      [b.probeId, null, null, null, new Array(SPARKLINE_HOURS).fill(null), null],
    );
    // Three failing runs opened an incident: the project's only open one.
    assert.deepEqual(
      data.incidents.map((i) => [i.probe_id, i.state, i.project]),
      [[zeta.probeId, "open", project]],
    );
  });

  test("open incidents: newest first, at most 100, resolved ones left out", async (t) => {
    const db = t.app.database.db;
    const { project } = await projectWith(t, []);
    const base = 9_000_000_000 + Math.floor(Math.random() * 1_000_000) * 1000;
    const incident = (i: number, resolved: boolean) => ({
      project,
      probe_key: String(base + i),
      probe_id: `probe-${i}`,
      label: `Probe ${i}`,
      started_at: new Date(NOW - (200 - i) * MINUTE),
      cause: "HTTP 500",
      runs_failed: 3,
      resolved_at: resolved ? new Date(NOW) : null,
      resolution: resolved ? "recovered" as const : null,
    });
    for (let i = 0; i < 101; i++) {
      await db.insertInto("incidents").values(incident(i, false)).execute();
    }
    await db.insertInto("incidents").values(incident(101, true)).execute();
    const { data } = await getOverview({ db, project, now: NOW });
    assert.equal(data.incidents.length, 100);
    assert.deepEqual(
      data.incidents.map((i) => i.label),
      Array.from({ length: 100 }, (_, i) => `Probe ${100 - i}`),
    );
    assert.ok(data.incidents.every((i) => i.state === "open" && i.project === project));
    // Every project's: this project's newest open incident leads those of all.
    const all = await getOverview({ db, now: NOW });
    assert.equal(all.data.incidents.length, 100);
    const ids = all.data.incidents.map((i) => BigInt(i.id));
    assert.ok(ids.every((id, i) => i === 0 || id < ids[i - 1]), "newest first");
  });

  test("every project by name, each with its probes; a disabled one says so", async (t) => {
    const db = t.app.database.db;
    const one = await projectWith(t, [{ url: "https://one.example.test/" }]);
    const two = await projectWith(t, [
      { url: "https://two.example.test/a" },
      { url: "https://two.example.test/b" },
    ]);
    assert.equal(
      (await t.api.patch(`/api/v1/projects/${two.project}`, { status: "disabled" })).status,
      200,
    );
    const { data, meta } = await getOverview({ db, now: NOW });
    const names = data.projects.map((p) => p.project);
    assert.deepEqual(names, [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const listed = await db.selectFrom("probes").select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    assert.equal(meta.probes, Number(listed.n));
    assert.equal(meta.projects, names.length);
    const found = (name: string) => data.projects.find((p) => p.project === name)!;
    assert.equal(found(one.project).status, "enabled");
    assert.deepEqual(found(one.project).probes.map((p) => p.url), ["https://one.example.test/"]);
    assert.equal(found(two.project).status, "disabled");
    assert.equal(found(two.project).probes.length, 2);
  });

  test("REST and /trpc answer the same; a missing project is a 404 on both", async (t) => {
    const { project, probes: [p] } = await projectWith(t, [{ url: "https://r.example.test/" }]);
    await record(t.app.database.db, [{ key: p.key, at: Date.now() - MINUTE, outcome: "up" }]);
    const rest = await t.api.get(`/api/v1/overview?project=${project}`);
    assert.equal(rest.status, 200);
    assert.equal(rest.headers.get("cache-control"), "no-store");
    assert.deepEqual(rest.body.data.projects.map((x: { project: string }) => x.project), [project]);
    const [probe] = rest.body.data.projects[0].probes;
    assert.equal(probe.state, "up");
    assert.equal(probe.uptime_24h, 1);
    assert.deepEqual(probe.sparkline.filter((x: number | null) => x !== null), [1]);
    assert.deepEqual(rest.body.meta.probes, 1);

    const trpc = await t.api.get(trpcQuery("overview.get", { project }));
    assert.equal(trpc.status, 200);
    const { meta, ...data } = trpc.body.result.data;
    // The schedule's lag is live (a probe due and unclaimed grows older between the two reads).
    const live = (d: Record<string, unknown>) => ({ ...d, schedule: null });
    assert.deepEqual({ data: live(data.data) }, { data: live(rest.body.data) });
    assert.equal(typeof data.data.schedule.lag_seconds, "number");
    assert.deepEqual({ ...meta, generated_at: null }, { ...rest.body.meta, generated_at: null });

    const all = await t.api.get("/api/v1/overview");
    assert.equal(all.status, 200);
    assert.ok(all.body.data.projects.some((x: { project: string }) => x.project === project));

    const missing = await t.api.get(`/api/v1/overview?project=${uniqueName()}`);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { error: { code: "not_found", message: "Project not found" } });
    const missingTrpc = await t.api.get(trpcQuery("overview.get", { project: uniqueName() }));
    assert.equal(missingTrpc.status, 404);
    assert.deepEqual(missingTrpc.body.error.data.error, missing.body.error);
    assert.equal((await t.api.get("/api/v1/overview", { key: null })).status, 401);
  });

  test("a project that is not text is refused with 422 naming it", async ({ api }) => {
    const res = await api.get(trpcQuery("overview.get", { project: 5 }));
    assert.equal(res.status, 422);
    assert.equal(res.body.error.data.error.details[0].path, "project");
  });
});
