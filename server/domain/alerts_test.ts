import assert from "node:assert/strict";
import { ALERT_DEFAULTS, type AlertOverrides } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { apiSuite, type TestClient, uniqueName } from "../testing/app.ts";
import { effectivePolicy, mergePolicy } from "./alerts.ts";

const PATH = "/api/v1/settings/alerts";
const projectPath = (project: string) => `/api/v1/projects/${project}/alerts`;

const NO_OVERRIDES: AlertOverrides = {
  enabled: null,
  targets: null,
  failure_threshold: null,
  success_threshold: null,
  reminder_minutes: null,
  notify_degraded: null,
  notify_recovered: null,
  location_quorum: null,
  escalation: null,
  flap_changes: null,
  flap_minutes: null,
};

async function newProject(api: TestClient): Promise<string> {
  const project = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  return project;
}

/** A stored notification target, written as a row: the targets API is not under test here. */
async function storedTarget(db: Db): Promise<string> {
  const name = uniqueName("t");
  await db.insertInto("notification_targets")
    .values({ name, kind: "webhook", config: json({ url: "https://hooks.example.test/" }) })
    .execute();
  return name;
}

/** The details of a 422 on REST, as `path: message` lines. */
function detailsOf(res: { status: number; body: { error: { details?: unknown[] } } }) {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  return (res.body.error.details as { path: string; message: string }[] ?? [])
    .map((d) => `${d.path}: ${d.message}`);
}

const trpcQuery = (path: string, input: unknown) =>
  `/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`;

// The global policy is one document: these cases run in order on one database, and the project
// cases read the global policy they merge with rather than assume it.
apiSuite("alert policy", (test) => {
  test("starts with the defaults: enabled, to the log, 3 down, 2 up, no reminders", async ({ api }) => {
    const res = await api.get(PATH);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      data: {
        enabled: true,
        targets: ["log"],
        failure_threshold: 3,
        success_threshold: 2,
        reminder_minutes: 0,
        notify_degraded: false,
        notify_recovered: true,
        location_quorum: "majority",
        escalation: [],
        flap_changes: 0,
        flap_minutes: 30,
      },
    });
    assert.deepEqual(res.body.data, ALERT_DEFAULTS);
  });

  test("flap_changes is 0 (off) or 2 to 100, flap_minutes 1 to 1,440; a project overrides them", async ({ api }) => {
    for (const body of [{ flap_changes: 1 }, { flap_changes: 101 }, { flap_minutes: 0 }]) {
      const res = await api.patch(PATH, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.details[0].path, Object.keys(body)[0]);
    }
    const set = await api.patch(PATH, { flap_changes: 5, flap_minutes: 20 });
    assert.equal(set.status, 200);
    assert.equal(set.body.data.flap_changes, 5);
    const project = await newProject(api);
    const own = await api.patch(projectPath(project), { flap_minutes: 60 });
    assert.equal(own.status, 200);
    assert.equal(own.body.data.overrides.flap_minutes, 60);
    assert.equal(own.body.data.effective.flap_minutes, 60);
    assert.equal(own.body.data.effective.flap_changes, 5, "inherited");
    assert.equal((await api.patch(PATH, { flap_changes: 0, flap_minutes: 30 })).status, 200);
  });

  test("a PATCH sets the fields sent and keeps the others", async ({ api }) => {
    const res = await api.patch(PATH, { failure_threshold: 5, notify_degraded: true });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      ...ALERT_DEFAULTS,
      failure_threshold: 5,
      notify_degraded: true,
    });
    assert.deepEqual((await api.get(PATH)).body, res.body);
  });

  test("a PATCH never turns alerts on by itself: only enabled: true does", async ({ api }) => {
    assert.equal((await api.patch(PATH, { enabled: false })).body.data.enabled, false);
    let res = await api.patch(PATH, { targets: ["log"], reminder_minutes: 60 });
    assert.equal(res.status, 200);
    assert.equal(res.body.data.enabled, false);
    assert.equal(res.body.data.reminder_minutes, 60);
    res = await api.patch(PATH, { success_threshold: 4 });
    assert.equal(res.body.data.enabled, false);
    res = await api.patch(PATH, { enabled: true });
    assert.equal(res.body.data.enabled, true);
    assert.equal(res.body.data.success_threshold, 4);
  });

  test("the bounds are accepted: thresholds 1 and 10, reminders 0, 5 and 10080", async ({ api }) => {
    for (
      const [field, value] of [
        ["failure_threshold", 1],
        ["failure_threshold", 10],
        ["success_threshold", 1],
        ["success_threshold", 10],
        ["reminder_minutes", 0],
        ["reminder_minutes", 5],
        ["reminder_minutes", 10_080],
      ] as const
    ) {
      const res = await api.patch(PATH, { [field]: value });
      assert.equal(res.status, 200, `${field} ${value}`);
      assert.equal(res.body.data[field], value);
    }
  });

  test("invalid patches answer 422 naming the field and change nothing", async ({ api }) => {
    const before = (await api.get(PATH)).body;
    const tooMany = Array.from({ length: 21 }, (_, i) => `t${i}`);
    const cases: [unknown, string[]][] = [
      [{ failure_threshold: 0 }, ["failure_threshold"]],
      [{ failure_threshold: 11 }, ["failure_threshold"]],
      [{ failure_threshold: 2.5 }, ["failure_threshold"]],
      [{ failure_threshold: "3" }, ["failure_threshold"]],
      [{ success_threshold: 0 }, ["success_threshold"]],
      [{ success_threshold: null }, ["success_threshold"]],
      [{ reminder_minutes: 4 }, ["reminder_minutes"]],
      [{ reminder_minutes: 1 }, ["reminder_minutes"]],
      [{ reminder_minutes: -5 }, ["reminder_minutes"]],
      [{ reminder_minutes: 10_081 }, ["reminder_minutes"]],
      [{ enabled: "true" }, ["enabled"]],
      [{ notify_degraded: 1 }, ["notify_degraded"]],
      [{ notify_recovered: null }, ["notify_recovered"]],
      [{ targets: [] }, ["targets"]],
      [{ targets: "log" }, ["targets"]],
      [{ targets: ["log", "log"] }, ["targets.1"]],
      [{ targets: ["has space"] }, ["targets.0"]],
      [{ targets: [""] }, ["targets.0"]],
      [{ targets: ["x".repeat(65)] }, ["targets.0"]],
      [{ targets: ["a\u0000b"] }, ["targets.0"]],
      [{ targets: tooMany }, ["targets"]],
      [{ enabled: false, failure_threshold: 0 }, ["failure_threshold"]],
      [{ failure_threshold: 2, colour: "red" }, ["colour"]],
    ];
    for (const [body, paths] of cases) {
      const res = await api.patch(PATH, body);
      const details = detailsOf(res);
      assert.equal(res.body.error.code, "validation_failed");
      assert.deepEqual(details.map((d) => d.split(":")[0]), paths, JSON.stringify(body));
    }
    const empty = await api.patch(PATH, {});
    assert.equal(empty.status, 422);
    assert.equal(empty.body.error.message, "No fields were provided");
    assert.deepEqual((await api.get(PATH)).body, before);
  });

  test("targets must exist: log or a stored target; each missing one is named", async ({ api, app }) => {
    const before = (await api.get(PATH)).body;
    const res = await api.patch(PATH, {
      enabled: false,
      failure_threshold: 7,
      targets: ["log", "ghost", "spectre"],
    });
    assert.deepEqual(detailsOf(res), [
      'targets.1: no notification target named "ghost"',
      'targets.2: no notification target named "spectre"',
    ]);
    assert.equal(res.body.error.message, "Validation failed");
    assert.deepEqual((await api.get(PATH)).body, before);

    const stored = await storedTarget(app.database.db);
    const ok = await api.patch(PATH, { targets: [stored, "log"] });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body.data.targets, [stored, "log"]);
    assert.deepEqual((await api.get(PATH)).body.data.targets, [stored, "log"]);
  });

  test("the same procedures answer on /trpc, with the same 422 details", async ({ api }) => {
    const got = await api.get(trpcQuery("alerts.get", {}));
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.result.data, (await api.get(PATH)).body);
    const updated = await api.post("/trpc/alerts.update", { reminder_minutes: 30 });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.result.data.data.reminder_minutes, 30);
    const bad = await api.post("/trpc/alerts.update", { targets: ["log", "nowhere"] });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.error.data.error.details, [
      { path: "targets.1", message: 'no notification target named "nowhere"' },
    ]);
    const empty = await api.post("/trpc/alerts.update", {});
    assert.equal(empty.status, 422);
    assert.equal(empty.body.error.data.error.message, "No fields were provided");
    assert.equal((await api.get(PATH)).body.data.reminder_minutes, 30);
  });

  test("a project without overrides inherits every field", async ({ api }) => {
    const project = await newProject(api);
    const global = (await api.get(PATH)).body.data;
    const res = await api.get(projectPath(project));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { project, overrides: NO_OVERRIDES, effective: global } });
  });

  test("overrides apply field by field; the rest follows the global policy", async ({ api, app }) => {
    const project = await newProject(api);
    const res = await api.patch(projectPath(project), {
      failure_threshold: 1,
      notify_recovered: false,
      enabled: false,
    });
    assert.equal(res.status, 200);
    const overrides = {
      ...NO_OVERRIDES,
      failure_threshold: 1,
      notify_recovered: false,
      enabled: false,
    };
    let global = (await api.get(PATH)).body.data;
    assert.deepEqual(res.body.data, {
      project,
      overrides,
      effective: { ...global, failure_threshold: 1, notify_recovered: false, enabled: false },
    });
    assert.deepEqual((await api.get(projectPath(project))).body, res.body);

    // A change of the global policy reaches the fields the project does not override.
    global = (await api.patch(PATH, { failure_threshold: 9, success_threshold: 6 })).body.data;
    const after = (await api.get(projectPath(project))).body.data;
    assert.deepEqual(after.overrides, overrides);
    assert.equal(after.effective.failure_threshold, 1);
    assert.equal(after.effective.success_threshold, 6);
    assert.deepEqual(after.effective, mergePolicy(global, overrides));
    assert.deepEqual(await effectivePolicy(app.database.db, project), after.effective);
  });

  test("null inherits again; fields not sent stay as they are", async ({ api }) => {
    const project = await newProject(api);
    await api.patch(projectPath(project), { reminder_minutes: 15, targets: ["log"] });
    const res = await api.patch(projectPath(project), { reminder_minutes: null });
    assert.equal(res.status, 200);
    const global = (await api.get(PATH)).body.data;
    assert.deepEqual(res.body.data.overrides, { ...NO_OVERRIDES, targets: ["log"] });
    assert.equal(res.body.data.effective.reminder_minutes, global.reminder_minutes);
    const cleared = await api.patch(projectPath(project), { targets: null });
    assert.deepEqual(cleared.body.data, {
      project,
      overrides: NO_OVERRIDES,
      effective: global,
    });
  });

  test("an override can switch alerts on for one project while the global policy is off", async ({ api }) => {
    const project = await newProject(api);
    const other = await newProject(api);
    await api.patch(PATH, { enabled: false });
    try {
      await api.patch(projectPath(project), { enabled: true });
      assert.equal((await api.get(projectPath(project))).body.data.effective.enabled, true);
      assert.equal((await api.get(projectPath(other))).body.data.effective.enabled, false);
    } finally {
      await api.patch(PATH, { enabled: true });
    }
  });

  test("a missing project is 404 on both reads and writes", async ({ api, app }) => {
    const missing = uniqueName("missing");
    for (
      const res of [
        await api.get(projectPath(missing)),
        await api.patch(projectPath(missing), { enabled: false }),
      ]
    ) {
      assert.equal(res.status, 404);
      assert.equal(res.body.error.message, "Project not found");
    }
    await assert.rejects(effectivePolicy(app.database.db, missing), /Project not found/);
    const count = await app.database.db.selectFrom("project_alerts").select("project")
      .where("project", "=", missing).execute();
    assert.equal(count.length, 0);
  });

  test("invalid overrides answer 422 naming the field and change nothing", async ({ api, app }) => {
    const project = await newProject(api);
    await api.patch(projectPath(project), { success_threshold: 3 });
    const before = (await api.get(projectPath(project))).body;
    const stored = await storedTarget(app.database.db);
    const cases: [unknown, string[]][] = [
      [{ failure_threshold: 0 }, ["failure_threshold"]],
      [{ success_threshold: 11 }, ["success_threshold"]],
      [{ reminder_minutes: 3 }, ["reminder_minutes"]],
      [{ enabled: "no" }, ["enabled"]],
      [{ targets: [] }, ["targets"]],
      [{ targets: [stored, stored] }, ["targets.1"]],
      [{ targets: [stored, "gone"] }, ["targets.1"]],
      [{ success_threshold: null, targets: ["nope"] }, ["targets.0"]],
      [{ project: "other" }, ["project"]],
      [{ notify_degraded: null, extra: true }, ["extra"]],
    ];
    for (const [body, paths] of cases) {
      const details = detailsOf(await api.patch(projectPath(project), body));
      assert.deepEqual(details.map((d) => d.split(":")[0]), paths, JSON.stringify(body));
    }
    const empty = await api.patch(projectPath(project), {});
    assert.equal(empty.status, 422);
    assert.equal(empty.body.error.message, "No fields were provided");
    assert.deepEqual((await api.get(projectPath(project))).body, before);
    // A project that never had overrides gets no row from a refused request.
    const fresh = await newProject(api);
    assert.equal((await api.patch(projectPath(fresh), { targets: ["ghost"] })).status, 422);
    const rows = await app.database.db.selectFrom("project_alerts").select("project")
      .where("project", "=", fresh).execute();
    assert.equal(rows.length, 0);
  });

  test("deleting a project drops its overrides: a new project of that name starts clean", async ({ api }) => {
    const project = await newProject(api);
    await api.patch(projectPath(project), { failure_threshold: 2 });
    assert.equal((await api.delete(`/api/v1/projects/${project}`)).status, 200);
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    assert.deepEqual((await api.get(projectPath(project))).body.data.overrides, NO_OVERRIDES);
  });

  test("the project procedures answer on /trpc", async ({ api }) => {
    const project = await newProject(api);
    const updated = await api.post("/trpc/alerts.updateProject", {
      project,
      notify_degraded: true,
    });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.result.data.data.overrides.notify_degraded, true);
    const got = await api.get(trpcQuery("alerts.getProject", { project }));
    assert.deepEqual(got.body.result.data, (await api.get(projectPath(project))).body);
    const missing = await api.get(trpcQuery("alerts.getProject", { project: uniqueName() }));
    assert.equal(missing.status, 404);
    const bad = await api.post("/trpc/alerts.updateProject", { project, failure_threshold: 99 });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.data.error.details[0].path, "failure_threshold");
  });
});

Deno.test("mergePolicy takes each override that is not null, else the global value", () => {
  const global = { ...ALERT_DEFAULTS, targets: ["log"] };
  assert.deepEqual(mergePolicy(global, NO_OVERRIDES), global);
  const all = {
    enabled: false,
    targets: ["a", "b"],
    failure_threshold: 1,
    success_threshold: 10,
    reminder_minutes: 5,
    notify_degraded: true,
    notify_recovered: false,
    location_quorum: 2,
    escalation: [{ after_minutes: 10, targets: ["log"] }],
    flap_changes: 4,
    flap_minutes: 15,
  };
  assert.deepEqual(mergePolicy(global, all), all);
  assert.deepEqual(mergePolicy(global, { ...NO_OVERRIDES, enabled: false }), {
    ...global,
    enabled: false,
  });
  // false and 0 are values, not "inherit".
  assert.deepEqual(
    mergePolicy({ ...global, notify_recovered: true, reminder_minutes: 60 }, {
      ...NO_OVERRIDES,
      notify_recovered: false,
      reminder_minutes: 0,
    }),
    { ...global, notify_recovered: false, reminder_minutes: 0 },
  );
});
