/**
 * Dependencies through the API (`depends_on` on probe writes and reads, cycles refused) and in
 * alerting on a fake clock (runs recorded through the runner's store with chosen outcomes,
 * thresholds of 1), on each database.
 */
import assert from "node:assert/strict";
import type { Outcome } from "@probe/shared";
import { apiSuite, type TestClient, uniqueName } from "../testing/app.ts";
import type { Db } from "../storage/database.ts";
import { syncSchedules } from "../runner/store.ts";
import { runAt, told } from "../testing/alert_runs.ts";
import { settleFlapping } from "./flapping.ts";

const T0 = Date.parse("2026-11-29T12:00:00Z");
const MINUTE = 60_000;
const probes = (project: string) => `/api/v1/projects/${project}/probes`;

/** A project with probes at these hosts; returns their probe_ids by host. */
async function projectWith(api: TestClient, hosts: string[]) {
  const project = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  const ids: Record<string, string> = {};
  for (const host of hosts) {
    const res = await api.post(probes(project), { url: `https://${host}.example.com/` });
    assert.equal(res.status, 201);
    ids[host] = (res.body as { data: { probe_id: string } }).data.probe_id;
  }
  return { project, ids };
}

const keyOf = async (db: Db, project: string, probeId: string) =>
  String(
    (await db.selectFrom("probes").select("key").where("project", "=", project)
      .where("probe_id", "=", probeId).executeTakeFirstOrThrow()).key,
  );

/**
 * A project with `db` and `web`, web depending on db, thresholds of 1, and a run of both at a
 * time from `start` on: each run returns what was told since the last one, by host.
 */
async function dependentPair(api: TestClient, db: Db, start: number) {
  const { project, ids } = await projectWith(api, ["db", "web"]);
  await api.patch(`${probes(project)}/${ids.web}`, { depends_on: [ids.db] });
  await db.updateTable("alert_settings").set({ failure_threshold: 1, success_threshold: 1 })
    .execute();
  await db.deleteFrom("probe_schedule").execute();
  await syncSchedules(db, { now: T0, intervalMs: 60_000 });
  const dep = await keyOf(db, project, ids.db);
  const web = await keyOf(db, project, ids.web);
  let seen = (await told(db)).length;
  let at = start;
  const run = async (db_: Outcome, web_: Outcome) => {
    at += MINUTE;
    await runAt(db, { [dep]: db_, [web]: web_ }, at);
    const all = await told(db);
    const out = all.slice(seen).map(([event, probe]) => [event, probe === ids.db ? "db" : "web"]);
    seen = all.length;
    return out.sort();
  };
  return { project, ids, run };
}

const thresholdsBack = (db: Db) =>
  db.updateTable("alert_settings").set({ failure_threshold: 3, success_threshold: 2 }).execute();

apiSuite("probe dependencies", (test) => {
  test("depends_on is written, read (absent when none), and a deleted dependency drops out", async ({ api }) => {
    const { project, ids } = await projectWith(api, ["db", "cache", "app"]);
    const before = await api.get(`${probes(project)}/${ids.app}`);
    assert.equal("depends_on" in (before.body as { data: object }).data, false);
    const patched = await api.patch(`${probes(project)}/${ids.app}`, {
      depends_on: [ids.db, ids.cache],
    });
    assert.equal(patched.status, 200);
    const read = await api.get(`${probes(project)}/${ids.app}`);
    assert.deepEqual(
      (read.body as { data: { depends_on: string[] } }).data.depends_on,
      [ids.db, ids.cache].sort(),
    );
    const listed = await api.get(probes(project));
    const rows = (listed.body as { data: { probe_id: string; depends_on?: string[] }[] }).data;
    assert.deepEqual(rows.find((p) => p.probe_id === ids.app)?.depends_on?.length, 2);
    assert.equal(rows.filter((p) => "depends_on" in p).length, 1);
    assert.equal((await api.delete(`${probes(project)}/${ids.cache}`)).status, 204);
    const after = await api.get(`${probes(project)}/${ids.app}`);
    assert.deepEqual((after.body as { data: { depends_on: string[] } }).data.depends_on, [ids.db]);
    assert.equal(
      (await api.patch(`${probes(project)}/${ids.app}`, { depends_on: [] })).status,
      200,
    );
    const none = await api.get(`${probes(project)}/${ids.app}`);
    assert.deepEqual(none.body, before.body, "no dependencies: the read as before");
  });

  test("a heartbeat names what it depends on, and a probe may depend on a heartbeat", async ({ api }) => {
    const { project, ids } = await projectWith(api, ["db"]);
    const beats = `/api/v1/projects/${project}/heartbeats`;
    const created = await api.post(beats, {
      name: "nightly",
      period_seconds: 3600,
      depends_on: [ids.db],
    });
    assert.equal(created.status, 201);
    const beat = (created.body as { data: { probe_id: string; depends_on: string[] } }).data;
    assert.deepEqual(beat.depends_on, [ids.db]);
    const onBeat = await api.patch(`${probes(project)}/${ids.db}`, { depends_on: [beat.probe_id] });
    assert.equal(onBeat.status, 422, "the heartbeat depends on it: a cycle");
    const cleared = await api.patch(`${beats}/nightly`, { depends_on: [] });
    assert.equal(cleared.status, 200);
    assert.equal("depends_on" in (cleared.body as { data: object }).data, false);
    const now = await api.patch(`${probes(project)}/${ids.db}`, { depends_on: [beat.probe_id] });
    assert.equal(now.status, 200);
  });

  test("cycles, the probe itself and unknown ids are 422s naming the field", async ({ api }) => {
    const { project, ids } = await projectWith(api, ["a", "b", "c"]);
    const path = (id: string) => `${probes(project)}/${id}`;
    assert.equal((await api.patch(path(ids.a), { depends_on: [ids.b] })).status, 200);
    assert.equal((await api.patch(path(ids.b), { depends_on: [ids.c] })).status, 200);
    const cycle = await api.patch(path(ids.c), { depends_on: [ids.a] });
    assert.equal(cycle.status, 422);
    const details = (cycle.body as { error: { details: { path: string }[] } }).error.details;
    assert.deepEqual(details.map((d) => d.path), ["depends_on"]);
    const self = await api.patch(path(ids.a), { depends_on: [ids.a] });
    assert.equal(self.status, 422);
    assert.deepEqual(
      (self.body as { error: { details: { path: string }[] } }).error.details.map((d) => d.path),
      ["depends_on.0"],
    );
    const unknown = await api.post(probes(project), {
      url: "https://d.example.com/",
      depends_on: ["nope"],
    });
    assert.equal(unknown.status, 422);
    const other = await projectWith(api, ["elsewhere"]);
    const across = await api.patch(path(ids.a), { depends_on: [other.ids.elsewhere] });
    assert.equal(across.status, 422, "another project's probe is not found here");
  });

  test("a dependency down: the dependent's incident opens untold and says so; told when the dependency recovers first", async ({ api, app }) => {
    const db = app.database.db;
    const { project, ids, run } = await dependentPair(api, db, T0);
    assert.deepEqual(await run("up", "up"), []);
    assert.deepEqual(await run("down", "down"), [["probe.down", "db"]]);
    const open = await api.get(`/api/v1/incidents?project=${project}&probe_id=${ids.web}`);
    const [incident] = (open.body as { data: { id: string; suppressed?: string }[] }).data;
    assert.equal(incident.suppressed, "suppressed: https://db.example.com/ is down");
    const detail = await api.get(`/api/v1/incidents/${incident.id}`);
    assert.equal(
      (detail.body as { data: { suppressed: string } }).data.suppressed,
      incident.suppressed,
    );
    assert.deepEqual(await run("down", "down"), [], "still both down");
    assert.deepEqual(await run("up", "down"), [
      ["probe.down", "web"],
      ["probe.recovered", "db"],
    ]);
    const released = await api.get(`/api/v1/incidents/${incident.id}`);
    assert.equal("suppressed" in (released.body as { data: object }).data, false);
    assert.deepEqual(await run("up", "up"), [["probe.recovered", "web"]]);
    await thresholdsBack(db);
  });

  test("a dependent that recovers before its dependency is never told", async ({ api, app }) => {
    const db = app.database.db;
    const { project, ids, run } = await dependentPair(api, db, T0 + 60 * MINUTE);
    assert.deepEqual(await run("down", "up"), [["probe.down", "db"]]);
    assert.deepEqual(await run("down", "down"), [], "opened untold");
    assert.deepEqual(await run("down", "up"), [], "recovered untold");
    assert.deepEqual(await run("up", "up"), [["probe.recovered", "db"]]);
    const incidents = await api.get(`/api/v1/incidents?project=${project}&probe_id=${ids.web}`);
    const [incident] = (incidents.body as { data: { state: string; suppressed?: string }[] }).data;
    assert.equal(incident.state, "resolved");
    assert.equal(incident.suppressed, "suppressed: https://db.example.com/ is down");
    await thresholdsBack(db);
  });

  test("a dependency taken away while it keeps the dependent untold: told with the write, once", async ({ api, app }) => {
    const db = app.database.db;
    const { project, ids, run } = await dependentPair(api, db, T0 + 120 * MINUTE);
    assert.deepEqual(await run("down", "up"), [["probe.down", "db"]]);
    assert.deepEqual(await run("down", "down"), [], "opened untold");
    const patched = await api.patch(`${probes(project)}/${ids.web}`, { depends_on: [] });
    assert.equal(patched.status, 200);
    assert.deepEqual(await run("down", "down"), [["probe.down", "web"]], "told with the write");
    const incidents = await api.get(`/api/v1/incidents?project=${project}&probe_id=${ids.web}`);
    const [incident] = (incidents.body as { data: { state: string; suppressed?: string }[] }).data;
    assert.equal(incident.state, "open");
    assert.equal("suppressed" in incident, false);
    assert.deepEqual(await run("up", "down"), [["probe.recovered", "db"]], "not told again");
    await thresholdsBack(db);
  });

  test("a dependency recovering while its dependent flaps: the dependent is told once, when it settles", async ({ api, app }) => {
    const db = app.database.db;
    const start = T0 + 180 * MINUTE;
    const { project, ids, run } = await dependentPair(api, db, start);
    const flaps = await api.patch(`/api/v1/projects/${project}/alerts`, {
      flap_changes: 2,
      flap_minutes: 10,
    });
    assert.equal(flaps.status, 200, flaps.text);
    assert.deepEqual(await run("up", "up"), []);
    assert.deepEqual(await run("up", "down"), [["probe.down", "web"]]);
    assert.deepEqual(await run("up", "up"), [["probe.recovered", "web"]]);
    assert.deepEqual(await run("down", "up"), [["probe.down", "db"]]);
    assert.deepEqual(await run("down", "down"), [["probe.flapping", "web"]], "flapping, untold");
    assert.deepEqual(await run("up", "down"), [["probe.recovered", "db"]], "left to the settling");
    const lastChange = start + 5 * MINUTE;
    assert.equal(await settleFlapping(db, new Date(lastChange + 10 * MINUTE)), 1);
    const open = await db.selectFrom("incidents").select("id")
      .where("probe_id", "=", ids.web).where("project", "=", project)
      .where("resolved_at", "is", null).executeTakeFirstOrThrow();
    const downs = await db.selectFrom("notifications").select("id")
      .where("incident_id", "=", open.id).where("event", "=", "probe.down").execute();
    assert.equal(downs.length, 1, "its probe.down once, from the settling");
    assert.deepEqual(await run("up", "down"), [["probe.down", "web"]], "the settling's, seen now");
    assert.deepEqual(await run("up", "down"), [], "nothing more");
    await thresholdsBack(db);
  });
});
