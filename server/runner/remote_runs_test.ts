import assert from "node:assert/strict";
import { sql } from "kysely";
import {
  apiSuite,
  TEST_READ_KEY,
  type TestClient,
  type TestContext,
  uniqueName,
} from "../testing/app.ts";
import {
  claimAs as claim,
  makeLocation as location,
  postAs as post,
  resultOf,
  TEST_RUNNER as runner,
} from "../testing/remote_runs.ts";
import { startTarget, type Target } from "../testing/target_server.ts";
import { gridAfter, offsetOf } from "../domain/schedule.ts";

/** A project with one probe of `target` that runs from `where` only. */
async function probeAt(api: TestClient, target: Target, where: string) {
  const project = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  const res = await api.post(`/api/v1/projects/${project}/probes`, {
    url: `${target.origin}/ok?${uniqueName("q")}`,
    locations: [where],
  });
  assert.equal(res.status, 201);
  return { project, probeId: res.body.data.probe_id as string };
}

/** Dates `project`'s probes a day back: runs of slots before they were made are refused. */
const madeADayAgo = (app: TestContext["app"], project: string) =>
  sql`update probes set created_at = now() - interval '1 day' where project = ${project}`
    .execute(app.database.db);

/** The run of `target`'s probe among those a claim (of up to 1,000) answers. */
const claimRunOf = async (api: TestClient, token: string, target: Target) =>
  (await claim(api, token, { max: 1000 })).body.data.runs
    .find((r: { url: string }) => r.url.startsWith(target.origin));

/** What a runner posts for a run that failed: answered 503. */
const failingResultOf = (runId: string) => ({
  ...resultOf(runId),
  outcome: "down",
  http_status: 503,
  error: "HTTP 503",
});

apiSuite("the runner protocol", (test) => {
  test("a location token may call the runner protocol and nothing else", async ({ api }) => {
    const { token } = await location(api);
    const doc = (await api.get("/api/v1/openapi.json", { key: null })).body;
    let refused = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, object>)) {
      for (const method of Object.keys(item)) {
        if (path.startsWith("/runner/")) continue;
        const concrete = path.replaceAll(/\{[^}]+\}/g, "x");
        const res = await api.call(method.toUpperCase(), `/api/v1${concrete}`, {
          key: token,
          ...(method === "get" || method === "delete" ? {} : { body: {} }),
        });
        assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
        assert.equal(res.body.error.code, "out_of_scope", `${method} ${path}`);
        refused++;
      }
    }
    assert.ok(refused > 40, `every operation was tried (${refused})`);
    for (const path of ["/metrics", "/backup"]) {
      const res = await api.get(path, { key: token });
      assert.equal(res.status, 403, path);
      assert.equal(res.body.error.code, "out_of_scope");
    }
    const trpc = await api.get("/trpc/whoami.get", { key: token });
    assert.equal(trpc.status, 403);
    assert.equal(trpc.body.error.data.error.code, "out_of_scope");
    // And the protocol refuses every key but a location token.
    for (const key of [undefined, TEST_READ_KEY]) {
      const res = await api.post("/api/v1/runner/claim", { ...runner, wait_seconds: 0 }, {
        ...(key && { key }),
      });
      assert.ok(res.status === 403 || res.status === 401, `${key}: ${res.status}`);
    }
    const withKey = await api.post("/api/v1/runner/claim", { ...runner, wait_seconds: 0 });
    assert.equal(withKey.status, 403);
    assert.equal(withKey.body.error.code, "out_of_scope");
    assert.equal((await claim(api, "plt_not-a-token")).status, 401);
  });

  test("a run is claimed, its result recorded once, posted twice or more", async ({ api }) => {
    const target = await startTarget();
    try {
      const eu = await location(api);
      const { project, probeId } = await probeAt(api, target, eu.name);
      const claimed = await claim(api, eu.token, { max: 10 });
      assert.equal(claimed.status, 200, claimed.text);
      assert.equal(claimed.body.data.location, eu.name);
      const runs = claimed.body.data.runs.filter((r: { url: string }) =>
        r.url.startsWith(target.origin)
      );
      assert.equal(runs.length, 1);
      const run = runs[0];
      assert.equal(run.method, "GET");
      assert.equal(run.timeout_ms, 10_000);
      assert.ok(Date.parse(run.lease_until) > Date.parse(run.due_at));
      // Claimed: a second claim does not get it again.
      const again = await claim(api, eu.token, { runner: "r2" });
      assert.ok(!again.body.data.runs.some((r: { run_id: string }) => r.run_id === run.run_id));

      const first = await post(api, eu.token, [resultOf(run.run_id), resultOf(run.run_id)]);
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(first.body.data.results.map((r: { status: string }) => r.status), [
        "recorded",
        "duplicate",
      ]);
      const second = await post(api, eu.token, [resultOf(run.run_id)]);
      assert.deepEqual(second.body.data, {
        results: [{ run_id: run.run_id, status: "duplicate" }],
        recorded: 0,
        duplicate: 1,
        expired: 0,
      });
      const results = await api.get(`/api/v1/projects/${project}/probes/${probeId}/results`);
      assert.equal(results.body.data.length, 1);
      assert.equal(results.body.data[0].location, eu.name);
      assert.equal(results.body.data[0].http_status, 200);
      const stats = await api.get(
        `/api/v1/projects/${project}/probes/${probeId}/stats?location=${eu.name}`,
      );
      assert.equal(stats.body.data.runs, 1);
      assert.equal(stats.body.data.last_outcome, "up");

      const read = (await api.get(`/api/v1/locations/${eu.name}`)).body.data;
      assert.equal(read.runners, 1, "r1 was handed a run; r2 only asked");
      assert.equal(read.version, "test-1");
      assert.ok(read.last_seen_at !== null);
      assert.equal(read.checks_per_minute, 1);
      // And in /metrics, per location.
      const metrics = (await api.get("/metrics")).text;
      assert.match(
        metrics,
        new RegExp(`^location_runners\\{location="${eu.name}",kind="remote"\\} 1$`, "m"),
      );
      assert.match(
        metrics,
        new RegExp(`^location_checks_per_minute\\{location="${eu.name}",kind="remote"\\} 1$`, "m"),
      );
      assert.match(metrics, /^location_schedule_lag_seconds\{location="local",kind="local"\} /m);
    } finally {
      await target.close();
    }
  });

  test("a result for a run not claimed for this location is 409, and nothing is recorded", async ({ api }) => {
    const target = await startTarget();
    try {
      const eu = await location(api);
      const us = await location(api);
      const { project, probeId } = await probeAt(api, target, eu.name);
      const run = await claimRunOf(api, eu.token, target);
      assert.ok(run);
      for (
        const results of [
          [resultOf(run.run_id)],
          [resultOf("not-a-run")],
          [resultOf(`${crypto.randomUUID()}.1.1.0`)],
        ]
      ) {
        const res = await post(api, us.token, results);
        assert.equal(res.status, 409, res.text);
        assert.equal(res.body.error.code, "conflict");
        assert.equal(res.body.error.details[0].path, "results.0.run_id");
      }
      // A post that mixes its own runs with another's records none of them.
      const mixed = await post(api, eu.token, [resultOf(run.run_id), resultOf("x.1.1.0")]);
      assert.equal(mixed.status, 409);
      assert.equal(mixed.body.error.details[0].path, "results.1.run_id");
      const results = await api.get(`/api/v1/projects/${project}/probes/${probeId}/results`);
      assert.equal(results.body.data.length, 0);
      assert.equal((await post(api, eu.token, [resultOf(run.run_id)])).body.data.recorded, 1);
    } finally {
      await target.close();
    }
  });

  test("a run whose lease ran out and was taken over is reported expired", async ({ api, app }) => {
    const target = await startTarget();
    try {
      const eu = await location(api);
      const { project, probeId } = await probeAt(api, target, eu.name);
      const mine = (runs: { url: string; run_id: string }[]) =>
        runs.find((r) => r.url.startsWith(target.origin))!;
      const first = mine((await claim(api, eu.token, { max: 1000 })).body.data.runs);
      // The lease runs out (r1 went quiet), and r2 takes the run over.
      await sql`update probe_schedule set lease_until = now() - interval '1 second'
        where location = ${eu.name}`.execute(app.database.db);
      const second = mine(
        (await claim(api, eu.token, { runner: "r2", max: 1000 })).body.data.runs,
      );
      assert.ok(second);
      assert.notEqual(second.run_id, first.run_id);
      const r2 = await post(api, eu.token, [resultOf(second.run_id)], { ...runner, runner: "r2" });
      assert.equal(r2.body.data.recorded, 1);
      const late = await post(api, eu.token, [resultOf(first.run_id)]);
      assert.deepEqual(late.body.data.results, [{ run_id: first.run_id, status: "expired" }]);
      const results = await api.get(`/api/v1/projects/${project}/probes/${probeId}/results`);
      assert.equal(results.body.data.length, 1);
    } finally {
      await target.close();
    }
  });

  test("runs made during an outage are recorded once each, on the probe's grid, never over another's slot", async ({ api, app }) => {
    const target = await startTarget();
    try {
      const eu = await location(api);
      const { project, probeId } = await probeAt(api, target, eu.name);
      await madeADayAgo(app, project);
      const other = await probeAt(api, target, "local");
      const run = await claimRunOf(api, eu.token, target);
      const [claimId, key, due] = run.run_id.split(".");
      const interval = run.interval_seconds * 1000;
      assert.ok(interval >= 10_000, `interval ${run.interval_seconds} s`);
      const offline = (at: number, k = key) => `${claimId}.${k}.${at}.0.o`;
      assert.equal((await post(api, eu.token, [resultOf(run.run_id)])).body.data.recorded, 1);
      // Slots of the probe's grid that passed while the runner could not reach the service.
      const grid = (before: number) => gridAfter(before, offsetOf(key, interval), interval);
      const slots = [grid(Number(due) - 3 * interval), grid(Number(due) - 2 * interval)];
      const first = await post(api, eu.token, slots.map((at) => resultOf(offline(at))));
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(first.body.data.results.map((r: { status: string }) => r.status), [
        "recorded",
        "recorded",
      ]);
      // Posted again, after a lost answer: recorded once.
      const again = await post(api, eu.token, slots.map((at) => resultOf(offline(at))));
      assert.equal(again.body.data.duplicate, 2);
      // Off the grid, in the future, older than a day, a probe not run at this location:
      // nothing recorded.
      const { rows: [{ key: otherKey }] } = await sql<{ key: string }>`
        select key::text from probes where project = ${other.project}`.execute(app.database.db);
      const refused = await post(api, eu.token, [
        resultOf(offline(slots[1] + 1)),
        resultOf(offline(slots[1] + 10 * interval)),
        resultOf(offline(slots[1] - Math.ceil(26 * 3_600_000 / interval) * interval)),
        resultOf(offline(slots[1], otherKey)),
      ]);
      assert.equal(refused.status, 200, refused.text);
      assert.equal(refused.body.data.expired, 4);
      // Another runner holds the probe's slot: its run is the one that counts.
      await sql`update probe_schedule
        set leased_by = 'r2#other', lease_until = now() + interval '1 minute',
            next_due_at = ${new Date(slots[0] - interval)}
        where location = ${eu.name}`.execute(app.database.db);
      const held = await post(api, eu.token, [resultOf(offline(slots[0] - interval))]);
      assert.equal(held.body.data.expired, 1);
      const results = await api.get(
        `/api/v1/projects/${project}/probes/${probeId}/results?location=${eu.name}`,
      );
      assert.equal(results.body.data.length, 3);
      const { rows } = await sql<{ due: string }>`
        select (extract(epoch from due_at) * 1000)::bigint::text as due from probe_results
        where probe_key = ${key} and location = ${eu.name} order by due_at`
        .execute(app.database.db);
      assert.deepEqual(rows.map((r) => Number(r.due)), [...slots, Number(due)]);
    } finally {
      await target.close();
    }
  });

  test("runs made during an outage: the service says which fell in maintenance; a disabled project's expire", async ({ api, app }) => {
    const target = await startTarget();
    try {
      const eu = await location(api);
      const { project } = await probeAt(api, target, eu.name);
      await madeADayAgo(app, project);
      const run = await claimRunOf(api, eu.token, target);
      const [claimId, key, due] = run.run_id.split(".");
      const interval = run.interval_seconds * 1000;
      const grid = (before: number) => gridAfter(before, offsetOf(key, interval), interval);
      // The runner says "not in maintenance" (its last claim's flag, `.0.o`).
      const offline = (at: number) => `${claimId}.${key}.${at}.0.o`;
      assert.equal((await post(api, eu.token, [resultOf(run.run_id)])).body.data.recorded, 1);
      const slots = [4, 3, 2].map((n) => grid(Number(due) - n * interval));
      // A window made while the runner could not reach the service covers the three slots.
      await sql`insert into maintenance_windows (project, starts_at, ends_at)
        values (${project}, ${new Date(slots[0] - 1000)}, ${new Date(slots[2] + 1000)})`
        .execute(app.database.db);
      const failing = slots.map((at) => failingResultOf(offline(at)));
      assert.equal((await post(api, eu.token, failing)).body.data.recorded, 3);
      const { rows } = await sql<{ state: string; fail_streak: number }>`
        select state, fail_streak from probe_schedule where location = ${eu.name}
          and probe_key = ${key}`.execute(app.database.db);
      assert.deepEqual(rows, [{ state: "up", fail_streak: 0 }], "runs in maintenance count not");
      // Its project disabled meanwhile: a run made during the outage is not recorded.
      const patched = await api.patch(`/api/v1/projects/${project}`, { status: "disabled" });
      assert.equal(patched.status, 200, patched.text);
      const late = await post(api, eu.token, [resultOf(offline(grid(Number(due) - 6 * interval)))]);
      assert.equal(late.body.data.expired, 1);
    } finally {
      await target.close();
    }
  });

  test("a late result is still recorded when no other runner took the run", async ({ api, app }) => {
    const target = await startTarget();
    try {
      const eu = await location(api);
      const { project, probeId } = await probeAt(api, target, eu.name);
      const run = await claimRunOf(api, eu.token, target);
      await sql`update probe_schedule set lease_until = now() - interval '1 second'
        where location = ${eu.name}`.execute(app.database.db);
      const res = await post(api, eu.token, [resultOf(run.run_id)]);
      assert.equal(res.body.data.recorded, 1);
      const results = await api.get(`/api/v1/projects/${project}/probes/${probeId}/results`);
      assert.equal(results.body.data.length, 1);
    } finally {
      await target.close();
    }
  });

  test("a remote location's failures move its state, and the probe's by quorum", async ({ api, app }) => {
    const target = await startTarget();
    try {
      const eu = await location(api);
      const { project, probeId } = await probeAt(api, target, eu.name);
      for (let i = 0; i < 4; i++) {
        // Due again at once: the next run of the probe is claimable.
        await sql`update probe_schedule set next_due_at = date_trunc('milliseconds', now())
          where location = ${eu.name}`
          .execute(app.database.db);
        const run = await claimRunOf(api, eu.token, target);
        const res = await post(api, eu.token, [failingResultOf(run.run_id)]);
        assert.equal(res.body.data.recorded, 1);
      }
      const { rows } = await sql<{ state: string; fail_streak: number }>`
        select state, fail_streak from probe_schedule where location = ${eu.name}
          and probe_key = (select key from probes where project = ${project})`
        .execute(app.database.db);
      assert.deepEqual(rows, [{ state: "down", fail_streak: 4 }]);
      // Its only location: one of one is a majority.
      const incidents = await api.get(`/api/v1/incidents?project=${project}`);
      assert.equal(incidents.body.data.length, 1);
      assert.deepEqual(incidents.body.data[0].locations.down, [eu.name]);
      const probe = (await api.get(`/api/v1/projects/${project}/probes/${probeId}`)).body.data;
      assert.equal(probe.state, "down");
      assert.deepEqual(
        probe.location_states.map((
          l: { location: string; state: string },
        ) => [l.location, l.state]),
        [[eu.name, "down"]],
      );
    } finally {
      await target.close();
    }
  });

  test("rotating or deleting a location stops its token", async ({ api }) => {
    const eu = await location(api);
    assert.equal((await claim(api, eu.token)).status, 200);
    const rotated = (await api.post(`/api/v1/locations/${eu.name}/token`)).body.data.token;
    assert.equal((await claim(api, eu.token)).status, 401);
    assert.equal((await claim(api, rotated)).status, 200);
    assert.equal((await api.delete(`/api/v1/locations/${eu.name}`)).status, 204);
    assert.equal((await claim(api, rotated)).status, 401);
  });

  test("bodies are bounded", async ({ api }) => {
    const eu = await location(api);
    for (
      const body of [
        { max: 1001 },
        { max: 0 },
        { wait_seconds: 26 },
        { runner: "" },
        { runner: "a b" },
        { runner: "x".repeat(65) },
        { version: "" },
        { extra: 1 },
      ]
    ) {
      const res = await claim(api, eu.token, body);
      assert.equal(res.status, 422, JSON.stringify(body));
    }
    const results = Array.from({ length: 1001 }, () => resultOf("x.1.1.0"));
    assert.equal((await post(api, eu.token, results)).status, 422);
    assert.equal((await post(api, eu.token, [])).status, 422);
    for (
      const bad of [
        { error: "e".repeat(501) },
        { address: "a".repeat(101) },
        { outcome: "maybe" },
        { http_status: 99 },
        { duration_ms: -1 },
        { started_at: "yesterday" },
        { failed_checks: Array.from({ length: 101 }, () => ({ check: "s", expected: "e" })) },
      ]
    ) {
      const res = await post(api, eu.token, [{ ...resultOf("x.1.1.0"), ...bad }]);
      assert.equal(res.status, 422, JSON.stringify(bad).slice(0, 80));
    }
  });

  test("a claim waits for due runs, and answers empty when none comes", async ({ api }) => {
    const eu = await location(api);
    const res = await claim(api, eu.token, { wait_seconds: 1 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data.runs, []);
  });
});
