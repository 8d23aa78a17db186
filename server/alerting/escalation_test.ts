/**
 * Escalation steps of the alert policy, on each database: the policy's `escalation` through the
 * API (its 422s), incidents opened by the runner's own recording (`claimDue`, `recordRuns`) at
 * chosen times, and the escalation loop driven at chosen times as the deliverer's poll calls it;
 * then with two service instances on one PostgreSQL database.
 */
import assert from "node:assert/strict";
import type { Outcome } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { openDatabase } from "../storage/database.ts";
import { apiSuite, createPostgresDatabase, type TestClient, uniqueName } from "../testing/app.ts";
import { heartbeatApp } from "../testing/heartbeats.ts";
import { claimDue, recordRuns, syncSchedules } from "../runner/store.ts";
import { escalateDue } from "./escalation.ts";

const RUNNER = "escalation-test";
const MINUTE = 60_000;
/** Far ahead of the real clock: nothing here is due for a poll that runs on it. */
const T0 = Date.parse("2031-01-01T00:00:00Z");

/** A project with one probe, scheduled, alerting on the first failure with `escalation`. */
async function probeWith(api: TestClient, db: Db, escalation: unknown, at: number) {
  const project = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  const res = await api.patch(`/api/v1/projects/${project}/alerts`, {
    failure_threshold: 1,
    success_threshold: 1,
    escalation,
  });
  assert.equal(res.status, 200, res.text);
  return { project, key: await insertProbe(db, project, at) };
}

/** A probe of `project`, scheduled from `at`; returns its key. */
async function insertProbe(db: Db, project: string, at: number, probeId = "site") {
  const { key } = await db.insertInto("probes").values({
    project,
    probe_id: probeId,
    url: `https://${project}-${probeId}.example.com/`,
    method: "GET",
    headers: json({}),
  }).returning("key").executeTakeFirstOrThrow();
  await syncSchedules(db, { now: at, intervalMs: MINUTE });
  return String(key);
}

/** One run of the probe `key` at `at`; other probes claimed alongside are left to their lease. */
async function runOnce(db: Db, key: string, outcome: Outcome, at: number) {
  assert.equal(await runDue(db, outcome, at, key), 1);
}

/** One run of every probe due at `at` (or of `only` among them); returns how many ran. */
async function runDue(db: Db, outcome: Outcome, at: number, only?: string) {
  const claimed = (await claimDue(db, {
    now: at,
    horizon: at + 3_600_000,
    // Expired at once: a probe claimed alongside can be run at the same time.
    leaseUntil: at - 1,
    runner: RUNNER,
    limit: 1000,
  })).filter((c) => only === undefined || c.key === only);
  await recordRuns(
    db,
    RUNNER,
    claimed.map((c) => ({
      key: c.key,
      due: c.due,
      nextDue: at + 1,
      result: {
        startedAt: new Date(at),
        durationMs: 10,
        outcome,
        httpStatus: outcome === "down" ? 503 : 200,
        error: outcome === "down" ? "HTTP 503" : null,
        address: "127.0.0.1",
      },
    })),
  );
  return claimed.length;
}

/** A stored notification target, written as a row: the targets API is not under test here. */
async function storedTarget(db: Db): Promise<string> {
  const name = uniqueName("t");
  await db.insertInto("notification_targets")
    .values({ name, kind: "webhook", config: json({ url: "https://hooks.example.test/" }) })
    .execute();
  return name;
}

async function openIncident(api: TestClient, project: string): Promise<string> {
  const res = await api.get(`/api/v1/incidents?project=${project}&state=open`);
  assert.equal(res.body.data.length, 1, res.text);
  return res.body.data[0].id;
}

/** The incident's notifications as `event target step` lines, in the order written. */
async function told(db: Db, incident: string): Promise<string[]> {
  const rows = await db.selectFrom("notifications").select(["event", "target", "payload"])
    .where("incident_id", "=", incident).orderBy("created_at").orderBy("target").execute();
  return rows.map((r) => {
    const step = (r.payload as { data: { escalation_step?: number } }).data.escalation_step;
    return `${r.event} ${r.target}${step === undefined ? "" : ` step ${step}`}`;
  });
}

/** The details of a 422, as `path: message` lines. */
function detailsOf(res: { status: number; body: { error: { details?: unknown[] } } }) {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  return (res.body.error.details as { path: string; message: string }[] ?? [])
    .map((d) => `${d.path}: ${d.message}`);
}

apiSuite("escalation", (test) => {
  test("the policy's escalation is validated: bounds, order, targets; a refusal changes nothing", async ({ api, app }) => {
    const path = "/api/v1/settings/alerts";
    const before = (await api.get(path)).body.data;
    assert.deepEqual(before.escalation, []);
    const step = (after_minutes: unknown, targets: unknown = ["log"]) => ({
      after_minutes,
      targets,
    });
    assert.deepEqual(detailsOf(await api.patch(path, { escalation: [step(0)] })), [
      "escalation.0.after_minutes: Too small: expected number to be >=1",
    ]);
    assert.deepEqual(detailsOf(await api.patch(path, { escalation: [step(10_081)] })), [
      "escalation.0.after_minutes: Too big: expected number to be <=10080",
    ]);
    assert.deepEqual(detailsOf(await api.patch(path, { escalation: [step(10), step(10)] })), [
      "escalation.1.after_minutes: must be more than the step before's after_minutes",
    ]);
    assert.equal(
      detailsOf(
        await api.patch(path, {
          escalation: [1, 2, 3, 4, 5, 6].map((m) => step(m)),
        }),
      )[0].split(":")[0],
      "escalation",
    );
    assert.equal(
      detailsOf(await api.patch(path, { escalation: [step(5, [])] }))[0].split(":")[0],
      "escalation.0.targets",
    );
    assert.deepEqual(detailsOf(await api.patch(path, { escalation: [step(5, ["log", "log"])] })), [
      "escalation.0.targets.1: must not repeat a target",
    ]);
    assert.equal(
      detailsOf(
        await api.patch(path, {
          escalation: [{ ...step(5), page: true }],
        }),
      )[0].split(":")[0],
      "escalation.0.page",
    );
    assert.equal(detailsOf(await api.patch(path, { escalation: null })).length, 1);
    const real = await storedTarget(app.database.db);
    assert.deepEqual(
      detailsOf(
        await api.patch(path, {
          failure_threshold: 1,
          escalation: [step(5, [real]), step(30, ["log", "nobody-here"])],
        }),
      ),
      ['escalation.1.targets.1: no notification target named "nobody-here"'],
    );
    assert.deepEqual((await api.get(path)).body.data, before, "a refused request changes nothing");
  });

  test("a project's escalation overrides (null inherits, [] none); a target a step names stays", async ({ api, app }) => {
    const db = app.database.db;
    const pager = await storedTarget(db);
    const { project } = await probeWith(api, db, [{ after_minutes: 10, targets: [pager] }], T0);
    const global = [{ after_minutes: 30, targets: ["log"] }];
    assert.equal((await api.patch("/api/v1/settings/alerts", { escalation: global })).status, 200);
    const read = (await api.get(`/api/v1/projects/${project}/alerts`)).body.data;
    assert.deepEqual(read.overrides.escalation, [{ after_minutes: 10, targets: [pager] }]);
    assert.deepEqual(read.effective.escalation, [{ after_minutes: 10, targets: [pager] }]);

    const refused = await api.delete(`/api/v1/notification-targets/${pager}`);
    assert.equal(refused.status, 409, refused.text);
    assert.deepEqual(refused.body.error.details, [
      { path: "name", message: `named by the alert escalation of project "${project}"` },
    ]);

    const none = await api.patch(`/api/v1/projects/${project}/alerts`, { escalation: [] });
    assert.deepEqual(none.body.data.effective.escalation, []);
    const inherit = await api.patch(`/api/v1/projects/${project}/alerts`, { escalation: null });
    assert.equal(inherit.body.data.overrides.escalation, null);
    assert.deepEqual(inherit.body.data.effective.escalation, global);
    assert.equal((await api.patch("/api/v1/settings/alerts", { escalation: [] })).status, 200);
    assert.equal((await api.delete(`/api/v1/notification-targets/${pager}`)).status, 204);
  });

  test("a step tells its targets after its minutes, once, unless the incident is acknowledged", async ({ api, app }) => {
    const db = app.database.db;
    const pager = await storedTarget(db);
    const at = T0 + 60 * MINUTE;
    const steps = [{ after_minutes: 10, targets: [pager] }];
    const loud = await probeWith(api, db, steps, at);
    const seen = await probeWith(api, db, steps, at);
    await runOnce(db, loud.key, "down", at);
    await runOnce(db, seen.key, "down", at);
    const loudId = await openIncident(api, loud.project);
    const seenId = await openIncident(api, seen.project);
    const ack = await api.post(`/api/v1/incidents/${seenId}/acknowledge`);
    assert.equal(ack.status, 200, ack.text);

    assert.equal(await escalateDue(db, new Date(at + 10 * MINUTE - 1)), 0, "not yet");
    assert.equal(await escalateDue(db, new Date(at + 10 * MINUTE)), 1);
    assert.equal(await escalateDue(db, new Date(at + 11 * MINUTE)), 0, "once");
    assert.equal(await escalateDue(db, new Date(at + 600 * MINUTE)), 0, "no step to come");
    assert.deepEqual(await told(db, loudId), ["probe.down log", `probe.down ${pager} step 1`]);
    assert.ok(
      (await told(db, seenId)).every((line) => !line.includes("step")),
      "acknowledged: no step",
    );

    // The step's event is the incident's down event, with its step.
    const [row] = await db.selectFrom("notifications").select("payload")
      .where("incident_id", "=", loudId).where("target", "=", pager).execute();
    const event = row.payload as { type: string; timestamp: string; data: Record<string, unknown> };
    assert.equal(event.type, "probe.down");
    assert.equal(event.timestamp, new Date(at + 10 * MINUTE).toISOString());
    assert.equal(event.data.incident_id, loudId);
    assert.equal(event.data.escalation_step, 1);
    assert.equal(event.data.started_at, new Date(at).toISOString());
    const [down] = await db.selectFrom("notifications").select("payload")
      .where("incident_id", "=", loudId).where("event", "=", "probe.down")
      .where("target", "=", "log").execute();
    assert.ok(!("escalation_step" in (down.payload as { data: object }).data));

    await runOnce(db, loud.key, "up", at + 20 * MINUTE);
    await runOnce(db, seen.key, "up", at + 20 * MINUTE);
  });

  test("two steps, and recovery tells every target that was told", async ({ api, app }) => {
    const db = app.database.db;
    const [first, second] = [await storedTarget(db), await storedTarget(db)];
    const at = T0 + 120 * MINUTE;
    const { project, key } = await probeWith(api, db, [
      { after_minutes: 5, targets: [first] },
      { after_minutes: 15, targets: [second, "log"] },
    ], at);
    await runOnce(db, key, "down", at);
    const id = await openIncident(api, project);
    assert.equal(await escalateDue(db, new Date(at + 5 * MINUTE)), 1);
    assert.equal(await escalateDue(db, new Date(at + 14 * MINUTE)), 0);
    assert.equal(await escalateDue(db, new Date(at + 15 * MINUTE)), 2);
    await runOnce(db, key, "up", at + 20 * MINUTE);
    const lines = await told(db, id);
    assert.deepEqual(lines.slice(0, 4), [
      "probe.down log",
      `probe.down ${first} step 1`,
      ...[`probe.down ${second} step 2`, "probe.down log step 2"].sort(),
    ]);
    assert.deepEqual(
      lines.slice(4).sort(),
      [
        `probe.recovered ${first}`,
        `probe.recovered ${second}`,
        "probe.recovered log",
      ].sort(),
    );
    assert.equal(await escalateDue(db, new Date(at + 600 * MINUTE)), 0);
  });

  test("a late poll sends every step due; a recovered incident gets no step", async ({ api, app }) => {
    const db = app.database.db;
    const pager = await storedTarget(db);
    const at = T0 + 180 * MINUTE;
    const steps = [
      { after_minutes: 5, targets: [pager] },
      { after_minutes: 10, targets: ["log"] },
    ];
    const late = await probeWith(api, db, steps, at);
    const quick = await probeWith(api, db, steps, at);
    await runOnce(db, late.key, "down", at);
    await runOnce(db, quick.key, "down", at);
    await runOnce(db, quick.key, "up", at + 2 * MINUTE);
    assert.equal(await escalateDue(db, new Date(at + 60 * MINUTE)), 2);
    const lateId = await openIncident(api, late.project);
    assert.deepEqual((await told(db, lateId)).slice(1).sort(), [
      "probe.down log step 2",
      `probe.down ${pager} step 1`,
    ]);
    await runOnce(db, late.key, "up", at + 61 * MINUTE);
  });

  test("a project whose notifications are off escalates to no one", async ({ api, app }) => {
    const db = app.database.db;
    const at = T0 + 200 * MINUTE;
    const { project, key } = await probeWith(api, db, [{ after_minutes: 1, targets: ["log"] }], at);
    const off = await api.patch(`/api/v1/projects/${project}/alerts`, { enabled: false });
    assert.equal(off.status, 200, off.text);
    await runOnce(db, key, "down", at);
    assert.equal(await escalateDue(db, new Date(at + 600 * MINUTE)), 0);
    assert.deepEqual(await told(db, await openIncident(api, project)), []);
    await runOnce(db, key, "up", at + 601 * MINUTE);
  });

  test("the global policy's steps reach projects that do not override them", async ({ api, app }) => {
    const db = app.database.db;
    const at = T0 + 240 * MINUTE;
    const project = uniqueName();
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const patched = await api.patch("/api/v1/settings/alerts", {
      failure_threshold: 1,
      escalation: [{ after_minutes: 1, targets: ["log"] }],
    });
    assert.equal(patched.status, 200, patched.text);
    const key = await insertProbe(db, project, at);
    await runOnce(db, key, "down", at);
    assert.equal(await escalateDue(db, new Date(at + MINUTE)), 1);
    assert.deepEqual(await told(db, await openIncident(api, project)), [
      "probe.down log",
      "probe.down log step 1",
    ]);
    await api.patch("/api/v1/settings/alerts", { failure_threshold: 3, escalation: [] });
  });
});

Deno.test({
  name: "escalation with two service instances on one PostgreSQL database: each step once",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const one = await heartbeatApp("postgres", {
      database: await openDatabase({ kind: "postgres", url }),
    });
    const two = await heartbeatApp("postgres", {
      database: await openDatabase({ kind: "postgres", url }),
    });
    try {
      const db = one.app.database.db;
      const project = uniqueName();
      assert.equal((await one.api.post("/api/v1/projects", { project })).status, 201);
      await one.api.patch(`/api/v1/projects/${project}/alerts`, {
        failure_threshold: 1,
        escalation: [
          { after_minutes: 5, targets: ["log"] },
          { after_minutes: 15, targets: ["log"] },
        ],
      });
      const PROBES = 40;
      // On the real clock, for the instances' own deliverers: the steps are due by now.
      const at = Date.now() - 20 * MINUTE;
      for (let i = 0; i < PROBES; i++) await insertProbe(db, project, at, `p${i}`);
      assert.equal(await runDue(db, "down", at), PROBES);
      // Small batches side by side, then each instance's whole poll side by side.
      const now = new Date();
      await Promise.all([
        escalateDue(db, now, 7),
        escalateDue(two.app.database.db, now, 7),
        escalateDue(db, now, 3),
        escalateDue(two.app.database.db, now, 3),
      ]);
      await Promise.all([one.app.deliverer.deliverOnce(), two.app.deliverer.deliverOnce()]);
      await Promise.all([one.app.deliverer.deliverOnce(), two.app.deliverer.deliverOnce()]);
      const rows = await db.selectFrom("notifications").select(["incident_id", "payload"])
        .where("event", "=", "probe.down").execute();
      const steps = new Map<string, number[]>();
      for (const r of rows) {
        const step = (r.payload as { data: { escalation_step?: number } }).data.escalation_step ??
          0;
        const id = String(r.incident_id);
        steps.set(id, [...steps.get(id) ?? [], step].sort());
      }
      assert.equal(steps.size, PROBES);
      for (const [id, sent] of steps) assert.deepEqual(sent, [0, 1, 2], `incident ${id}`);
      const left = await db.selectFrom("incidents")
        .select(["escalation_step", "next_escalation_at"]).execute();
      assert.ok(left.every((i) => i.escalation_step === 2 && i.next_escalation_at === null));
    } finally {
      await one.app.close();
      await two.app.close();
      await drop();
    }
  },
});
