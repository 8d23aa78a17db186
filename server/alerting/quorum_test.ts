import assert from "node:assert/strict";
import { sql } from "kysely";
import { apiSuite, LOOPBACK_ONLY, type TestClient, uniqueName } from "../testing/app.ts";
import { runDueProbesOnce } from "../testing/runs.ts";
import { executeProbe } from "../runner/execute.ts";
import { probeUserAgent } from "../runner/user_agent.ts";
import { sweepStale, verdictOf } from "./verdicts.ts";
import type { Db } from "../storage/database.ts";

const NOW = Date.parse("2026-11-25T12:00:00Z");
const fresh = (location: string, state: "up" | "down" | "degraded" | "unknown") => ({
  location,
  state,
  last_run_at: new Date(NOW - 1000),
});
const decide = (rows: ReturnType<typeof fresh>[], quorum = 0) =>
  verdictOf(rows, { quorum, staleBefore: NOW - 180_000, shown: (s) => s || "local" }).state;

Deno.test("the verdict: at least the quorum of locations down; majority by default", () => {
  assert.equal(decide([fresh("a", "down")]), "down", "1 of 1");
  assert.equal(decide([fresh("a", "down"), fresh("b", "up")]), "up", "1 of 2 is no majority");
  assert.equal(decide([fresh("a", "down"), fresh("b", "down")]), "down", "2 of 2");
  assert.equal(decide([fresh("a", "down"), fresh("b", "down"), fresh("c", "up")]), "down");
  assert.equal(decide([fresh("a", "down"), fresh("b", "up"), fresh("c", "up")]), "up");
  assert.equal(decide([fresh("a", "down"), fresh("b", "up")], 1), "down", "quorum 1");
  assert.equal(decide([fresh("a", "down"), fresh("b", "up")], 5), "up", "5: all of them");
  assert.equal(decide([fresh("a", "down"), fresh("b", "down")], 5), "down");
  assert.equal(decide([fresh("a", "degraded"), fresh("b", "up")]), "degraded");
  assert.equal(decide([fresh("a", "unknown")]), "unknown");
  assert.equal(decide([]), "unknown");
  // An unknown location that could make the quorum leaves the probe unknown.
  assert.equal(decide([fresh("a", "down"), fresh("b", "unknown")]), "unknown");
  assert.equal(decide([fresh("a", "down"), fresh("b", "up"), fresh("c", "unknown")]), "unknown");
  assert.equal(decide([fresh("a", "up"), fresh("b", "up"), fresh("c", "unknown")]), "up");
});

Deno.test("the verdict: a location with no result for three intervals is unknown, not down", () => {
  const stale = { location: "a", state: "down" as const, last_run_at: new Date(NOW - 200_000) };
  const { state, locations } = verdictOf([stale, fresh("b", "up")], {
    quorum: 1,
    staleBefore: NOW - 180_000,
    shown: (s) => s,
  });
  assert.equal(state, "unknown");
  assert.deepEqual(locations, { down: [], up: ["b"], degraded: [], unknown: ["a"], stale: ["a"] });
});

/** A target that fails (503) the checks of one location, told by their User-Agent. */
function uaTarget() {
  const state = { failing: null as string | null };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const ua = req.headers.get("user-agent") ?? "";
    const failing = state.failing !== null && ua.includes(`(location=${state.failing})`);
    return new Response(failing ? "no" : "ok", { status: failing ? 503 : 200 });
  });
  return {
    state,
    url: `http://127.0.0.1:${server.addr.port}/health`,
    close: () => server.shutdown(),
  };
}

async function setUp(api: TestClient, url: string, locations: string[]) {
  const project = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  const res = await api.post(`/api/v1/projects/${project}/probes`, { url, locations });
  assert.equal(res.status, 201);
  return { project, probeId: res.body.data.probe_id as string };
}

/** One run from each location of the project's probe: the built-in runner, then `remote`. */
async function round(
  db: Db,
  api: TestClient,
  project: string,
  remote: { name: string; token: string },
) {
  await sql`update probe_schedule set next_due_at = date_trunc('milliseconds', now())
    where probe_key in (select key from probes where project = ${project})`.execute(db);
  await runDueProbesOnce(db);
  const who = { runner: "q1", version: "1" };
  const claimed = await api.post("/api/v1/runner/claim", { ...who, wait_seconds: 0, max: 1000 }, {
    key: remote.token,
  });
  assert.equal(claimed.status, 200);
  const results = [];
  for (const run of claimed.body.data.runs) {
    const r = await executeProbe(
      { ...run, timeoutMs: run.timeout_ms },
      { policy: LOOPBACK_ONLY, timeoutMs: 5000, userAgent: probeUserAgent(remote.name) },
    );
    results.push({
      run_id: run.run_id,
      started_at: r.startedAt.toISOString(),
      duration_ms: Math.round(r.durationMs),
      outcome: r.outcome,
      http_status: r.httpStatus,
      error: r.error,
      address: r.address,
      failed_checks: r.failedChecks ?? null,
    });
  }
  if (results.length > 0) {
    const posted = await api.post("/api/v1/runner/results", { ...who, results }, {
      key: remote.token,
    });
    assert.equal(posted.status, 200);
  }
}

const events = async (db: Db, project: string) =>
  (await sql<{ event: string; payload: { data: { locations: Record<string, string[]> } } }>`
    select n.event, n.payload from notifications n join incidents i on i.id = n.incident_id
    where i.project = ${project} and n.target = 'log' order by n.created_at`.execute(db)).rows;

apiSuite("verdicts by quorum", (test) => {
  test("location_quorum in the policy and a project's overrides", async ({ api }) => {
    for (const q of [0, 17, "half", 1.5]) {
      assert.equal(
        (await api.patch("/api/v1/settings/alerts", { location_quorum: q })).status,
        422,
      );
    }
    const project = uniqueName();
    await api.post("/api/v1/projects", { project });
    const set = await api.patch(`/api/v1/projects/${project}/alerts`, { location_quorum: 2 });
    assert.equal(set.status, 200);
    assert.equal(set.body.data.overrides.location_quorum, 2);
    assert.equal(set.body.data.effective.location_quorum, 2);
    const back = await api.patch(`/api/v1/projects/${project}/alerts`, { location_quorum: null });
    assert.equal(back.body.data.effective.location_quorum, "majority");
  });

  test("one failing location of two: no alert by majority; with quorum 1, one, naming it", async ({ api, app }) => {
    const target = uaTarget();
    try {
      const db = app.database.db;
      const made = await api.post("/api/v1/locations", { name: uniqueName("eu") });
      const eu = { name: made.body.data.name as string, token: made.body.data.token as string };
      const { project, probeId } = await setUp(api, target.url, ["local", eu.name]);
      target.state.failing = eu.name;
      for (let i = 0; i < 3; i++) await round(db, api, project, eu);
      let probe = (await api.get(`/api/v1/projects/${project}/probes/${probeId}`)).body.data;
      assert.deepEqual(
        probe.location_states.map((
          l: { location: string; state: string },
        ) => [l.location, l.state]),
        [["local", "up"], [eu.name, "down"]],
      );
      assert.equal(probe.state, "up", "1 of 2 down is no majority");
      assert.deepEqual(await events(db, project), []);

      await api.patch(`/api/v1/projects/${project}/alerts`, { location_quorum: 1 });
      await round(db, api, project, eu);
      await round(db, api, project, eu);
      probe = (await api.get(`/api/v1/projects/${project}/probes/${probeId}`)).body.data;
      assert.equal(probe.state, "down");
      let sent = await events(db, project);
      assert.deepEqual(sent.map((e) => e.event), ["probe.down"], "once per transition");
      assert.deepEqual(sent[0].payload.data.locations.down, [eu.name]);
      assert.deepEqual(sent[0].payload.data.locations.up, ["local"]);
      const incidents = (await api.get(`/api/v1/incidents?project=${project}`)).body.data;
      assert.equal(incidents.length, 1);
      assert.deepEqual(incidents[0].locations.down, [eu.name]);
      // The public status page names no location unless its settings show them.
      await api.patch(`/api/v1/projects/${project}/status-page`, { public: true });
      const hidden = await api.get(`/status/${project}/status.json`, { key: null });
      assert.equal(hidden.status, 200);
      assert.deepEqual(hidden.body.probes[0].locations, []);
      assert.ok(!(await api.get(`/status/${project}`, { key: null })).text.includes(eu.name));
      await api.patch(`/api/v1/projects/${project}/status-page`, { show_locations: true });
      const page = await api.get(`/status/${project}/status.json`, { key: null });
      assert.deepEqual(page.body.probes[0].locations, [
        { location: eu.name, state: "down" },
        { location: "local", state: "up" },
      ]);
      const html = await api.get(`/status/${project}`, { key: null });
      assert.match(html.text, new RegExp(`Locations: ${eu.name}: <span class="st-down">`));

      target.state.failing = null;
      for (let i = 0; i < 3; i++) await round(db, api, project, eu);
      sent = await events(db, project);
      assert.deepEqual(sent.map((e) => e.event), ["probe.down", "probe.recovered"]);
      assert.deepEqual(sent[1].payload.data.locations.up.sort(), [eu.name, "local"].sort());
      probe = (await api.get(`/api/v1/projects/${project}/probes/${probeId}`)).body.data;
      assert.equal(probe.state, "up");
    } finally {
      await target.close();
    }
  });

  test("a stale location counts as unknown: the incident stays open and says so", async ({ api, app }) => {
    const target = uaTarget();
    try {
      const db = app.database.db;
      const made = await api.post("/api/v1/locations", { name: uniqueName("eu") });
      const eu = { name: made.body.data.name as string, token: made.body.data.token as string };
      const { project, probeId } = await setUp(api, target.url, [eu.name]);
      target.state.failing = eu.name;
      for (let i = 0; i < 3; i++) await round(db, api, project, eu);
      assert.deepEqual((await events(db, project)).map((e) => e.event), ["probe.down"]);
      // Its runners go quiet: no result for three intervals (the default 60 s here).
      await sql`update probe_schedule set last_run_at = now() - interval '4 minutes'
        where location = ${eu.name}`.execute(db);
      await sql`update probe_verdicts set stale_at = now() - interval '1 second'
        where probe_key in (select key from probes where project = ${project})`.execute(db);
      const swept = await sweepStale(db, {
        now: new Date(),
        localName: "local",
        intervalMs: 60_000,
      });
      assert.ok(swept >= 1);
      const probe = (await api.get(`/api/v1/projects/${project}/probes/${probeId}`)).body.data;
      assert.equal(probe.state, "unknown");
      assert.equal(probe.location_states[0].stale, true);
      const incidents = (await api.get(`/api/v1/incidents?project=${project}`)).body.data;
      assert.equal(incidents[0].state, "open", "stale is not recovered");
      assert.deepEqual(incidents[0].locations.stale, [eu.name]);
      assert.deepEqual((await events(db, project)).map((e) => e.event), ["probe.down"]);
    } finally {
      await target.close();
    }
  });
});
