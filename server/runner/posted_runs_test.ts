import assert from "node:assert/strict";
import { sql } from "kysely";
import { apiSuite, type TestContext } from "../testing/app.ts";
import { claimAs, makeLocation, postAs, probeOnlyAt, resultOf } from "../testing/remote_runs.ts";
import { gridAfter, offsetOf } from "../domain/schedule.ts";
import { STALE_INTERVALS } from "../alerting/verdicts.ts";
import { CLOCK_SKEW_MS } from "./posted_runs.ts";
import { evaluate } from "./assertions.ts";
import {
  MAX_ASSERTION_TEXT,
  MAX_CHECK_LENGTH,
  MAX_EXPECTED_LENGTH,
  MAX_SEEN_LENGTH,
  postedFailedCheck,
  type ProbeExpect,
} from "@probe/shared";

/** A location running one new probe, and the run a claim gave for it. */
async function claimedRun({ api }: TestContext) {
  const eu = await makeLocation(api);
  const { project, probeId } = await probeOnlyAt(api, eu.name);
  const claimed = await claimAs(api, eu.token);
  assert.equal(claimed.body.data.runs.length, 1, claimed.text);
  const run = claimed.body.data.runs[0] as { run_id: string; interval_seconds: number };
  return { ...eu, project, probeId, run };
}

const startedAt = (runId: string, at: string) => ({ ...resultOf(runId), started_at: at });

apiSuite("posted results: dated by the service's clock, every string bounded", (test) => {
  test("a start far ahead of the service's clock, or before the run could be, records nothing", async (t) => {
    const { api, app } = t;
    const p = await claimedRun(t);
    const base = `/api/v1/projects/${p.project}/probes/${p.probeId}`;
    const year = new Date(Date.now() + 365 * 86_400_000).toISOString();
    for (
      const at of [
        year,
        new Date(Date.now() + CLOCK_SKEW_MS + 5_000).toISOString(),
        "9998-12-31T23:59:59.999Z",
        "1970-01-01T00:00:00.000Z",
        new Date(Date.now() - 86_400_000).toISOString(),
      ]
    ) {
      const res = await postAs(api, p.token, [startedAt(p.run.run_id, at)]);
      assert.equal(res.status, 200, `${at}: ${res.text}`);
      assert.deepEqual(res.body.data.results, [{ run_id: p.run.run_id, status: "expired" }], at);
    }
    // The largest instant a client may send is no 500 either.
    const last = await postAs(api, p.token, [startedAt(p.run.run_id, "9999-12-31T23:59:59.999Z")]);
    assert.ok(last.status === 200 || last.status === 422, last.text);
    if (last.status === 200) assert.equal(last.body.data.expired, 1);
    const results = await api.get(`${base}/results`);
    assert.deepEqual(results.body.data, []);
    const { rows } = await sql<{ last_run_at: Date | null }>`
      select last_run_at from probe_schedule where location = ${p.name}`.execute(app.database.db);
    assert.deepEqual(rows, [{ last_run_at: null }]);
    // The run is still the claim's: a result dated within the skew is recorded.
    const ok = await postAs(api, p.token, [startedAt(p.run.run_id, new Date().toISOString())]);
    assert.equal(ok.body.data.recorded, 1);
  });

  test("a start ahead by less than the skew is recorded as of the service's clock: the location goes stale on time", async (t) => {
    const { api, app } = t;
    const p = await claimedRun(t);
    const ahead = new Date(Date.now() + CLOCK_SKEW_MS - 5_000).toISOString();
    const res = await postAs(api, p.token, [startedAt(p.run.run_id, ahead)]);
    const answered = Date.now();
    assert.equal(res.body.data.recorded, 1, res.text);
    const results = await api.get(`/api/v1/projects/${p.project}/probes/${p.probeId}/results`);
    assert.ok(Date.parse(results.body.data[0].started_at) <= answered, results.text);
    const probe = await api.get(`/api/v1/projects/${p.project}/probes/${p.probeId}`);
    const [state] = probe.body.data.location_states;
    assert.ok(Date.parse(state.last_run_at) <= answered, probe.text);
    // When the location turns stale: three intervals after the service's clock, not the runner's.
    const { rows: [verdict] } = await sql<{ stale_at: Date }>`
      select v.stale_at from probe_verdicts v join probes p on p.key = v.probe_key
      where p.project = ${p.project}`.execute(app.database.db);
    const interval = p.run.interval_seconds * 1000;
    assert.ok(
      new Date(verdict.stale_at).getTime() <= answered + STALE_INTERVALS * interval,
      String(verdict.stale_at),
    );
  });

  test("runs made during an outage for slots before the probe was made record nothing", async (t) => {
    const { api } = t;
    const p = await claimedRun(t);
    const [claim, key] = p.run.run_id.split(".");
    const interval = p.run.interval_seconds * 1000;
    assert.equal((await postAs(api, p.token, [resultOf(p.run.run_id)])).body.data.recorded, 1);
    const slot = gridAfter(Date.now() - 20 * 3_600_000, offsetOf(key, interval), interval);
    const res = await postAs(api, p.token, [resultOf(`${claim}.${key}.${slot}.0.o`)]);
    assert.deepEqual(res.body.data.results.map((r: { status: string }) => r.status), ["expired"]);
    const stats = await api.get(`/api/v1/projects/${p.project}/probes/${p.probeId}/stats`);
    assert.equal(stats.body.data.runs, 1, stats.text);
  });

  test("every string a posted failed check holds is bounded: 422 naming it, nothing recorded", async (t) => {
    const { api } = t;
    const p = await claimedRun(t);
    const failing = (check: Record<string, unknown>) => ({
      ...resultOf(p.run.run_id),
      outcome: "down",
      failed_checks: [{ check: "status", expected: "below 400", seen: "500", ...check }],
    });
    const at = "results.0.failed_checks.0";
    for (
      const [bad, path] of [
        [{ check: "c".repeat(100_000) }, `${at}.check`],
        [{ check: "c".repeat(MAX_CHECK_LENGTH + 1) }, `${at}.check`],
        [{ check: "" }, `${at}.check`],
        [{ check: "status\u0000" }, `${at}.check`],
        [{ expected: "e".repeat(MAX_EXPECTED_LENGTH + 1) }, `${at}.expected`],
        [{ seen: "s".repeat(MAX_SEEN_LENGTH + 1) }, `${at}.seen`],
        [{ note: "n".repeat(100_000) }, `${at}.note`],
      ] as const
    ) {
      const res = await postAs(api, p.token, [failing(bad)]);
      assert.equal(res.status, 422, `${path}: ${res.text.slice(0, 200)}`);
      assert.equal(res.body.error.details[0].path, path);
    }
    const results = await api.get(`/api/v1/projects/${p.project}/probes/${p.probeId}/results`);
    assert.deepEqual(results.body.data, []);
    // The longest the runner's own assertions write fit, and are recorded.
    const long = (c: string) => c.repeat(MAX_ASSERTION_TEXT);
    const expect: ProbeExpect = {
      status: [200, "3xx"],
      body: { contains: [long('"'), long("\u00e9")], not_contains: [long("{")] },
      json: [
        { path: `/${long("~0").slice(0, 510)}`, op: "eq", value: long('"') },
        { path: "/a", op: "contains", value: long("x") },
      ],
      headers: [{ name: "x".repeat(128), op: "eq", value: long("v") }],
      certificate_days: 3650,
    };
    const checks = evaluate(expect, {
      status: 599,
      headers: { ["x".repeat(128)]: long("w") },
      body: JSON.stringify({ a: long("{"), [long("~").slice(0, 255)]: long("\u0000") }),
      certificate: { validTo: new Date(0) },
      now: Date.now(),
    });
    assert.equal(checks.length, 8, checks.map((c) => c.check).join());
    for (const c of checks) assert.ok(postedFailedCheck.safeParse(c).success, JSON.stringify(c));
    const res = await postAs(api, p.token, [{ ...failing({}), failed_checks: checks }]);
    assert.equal(res.body.data.recorded, 1, res.text.slice(0, 300));
  });
});
