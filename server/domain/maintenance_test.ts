import assert from "node:assert/strict";
import { MAX_MAINTENANCE_WINDOWS } from "@probe/shared";
import { apiSuite, type TestClient, uniqueName } from "../testing/app.ts";
import { isInMaintenance, stateAt } from "./maintenance.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const path = (project: string) => `/api/v1/projects/${project}/maintenance`;
/** A time `ms` from now, as ISO 8601 in UTC. */
const fromNow = (ms: number) => new Date(Date.now() + ms).toISOString();

async function newProject(api: TestClient): Promise<string> {
  const project = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  return project;
}

/** Windows well away from now (hours), so that no state can change while a case runs. */
async function pastActiveUpcoming(api: TestClient, project: string) {
  // Created out of order: the list orders by starts_at.
  const upcoming = await api.post(path(project), {
    starts_at: fromNow(2 * HOUR),
    ends_at: fromNow(3 * HOUR),
    reason: "upgrade",
  });
  const past = await api.post(path(project), {
    starts_at: fromNow(-3 * HOUR),
    ends_at: fromNow(-2 * HOUR),
  });
  const active = await api.post(path(project), {
    starts_at: fromNow(-HOUR),
    ends_at: fromNow(HOUR),
    reason: null,
  });
  for (const res of [upcoming, past, active]) assert.equal(res.status, 201, res.text);
  return { past: past.body.data, active: active.body.data, upcoming: upcoming.body.data };
}

apiSuite("maintenance windows", (test) => {
  test("creating a window answers 201 with the window, times in UTC", async ({ api }) => {
    const project = await newProject(api);
    const res = await api.post(path(project), {
      starts_at: "2031-03-01T10:00:00+02:00",
      ends_at: "2031-03-01T12:30:00.250+02:00",
      reason: "Database upgrade",
    });
    assert.equal(res.status, 201);
    const { id, created_at, ...rest } = res.body.data;
    assert.match(id, /^[1-9][0-9]*$/);
    assert.ok(Math.abs(Date.parse(created_at) - Date.now()) < 10 * 60_000);
    assert.deepEqual(rest, {
      project,
      starts_at: "2031-03-01T08:00:00.000Z",
      ends_at: "2031-03-01T10:30:00.250Z",
      reason: "Database upgrade",
      state: "upcoming",
    });
    const listed = await api.get(path(project));
    assert.deepEqual(listed.body, { data: [res.body.data], meta: { count: 1 } });
  });

  test("the list is ordered by starts_at and filtered by state", async ({ api }) => {
    const project = await newProject(api);
    const w = await pastActiveUpcoming(api, project);
    assert.equal(w.past.state, "past");
    assert.equal(w.active.state, "active");
    assert.equal(w.upcoming.state, "upcoming");
    assert.equal(w.upcoming.reason, "upgrade");
    assert.equal(w.past.reason, null);
    const all = await api.get(path(project));
    assert.equal(all.status, 200);
    assert.deepEqual(all.body, { data: [w.past, w.active, w.upcoming], meta: { count: 3 } });
    assert.deepEqual((await api.get(`${path(project)}?state=all`)).body, all.body);
    for (const state of ["past", "active", "upcoming"] as const) {
      const res = await api.get(`${path(project)}?state=${state}`);
      assert.deepEqual(res.body, { data: [w[state]], meta: { count: 1 } }, state);
    }
    const bad = await api.get(`${path(project)}?state=current`);
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.details[0].path, "state");
  });

  test("a project's list holds only its own windows; an empty one is []", async ({ api }) => {
    const a = await newProject(api);
    const b = await newProject(api);
    await pastActiveUpcoming(api, a);
    assert.deepEqual((await api.get(path(b))).body, { data: [], meta: { count: 0 } });
  });

  test("invalid windows answer 422 naming the field and create nothing", async ({ api }) => {
    const project = await newProject(api);
    const starts_at = "2031-05-01T00:00:00Z";
    const cases: [unknown, string][] = [
      [{ starts_at, ends_at: starts_at }, "ends_at"],
      [{ starts_at, ends_at: "2031-04-30T23:59:59Z" }, "ends_at"],
      [{ starts_at, ends_at: "2031-05-01T02:00:00+03:00" }, "ends_at"],
      [{ starts_at, ends_at: "2032-05-01T00:00:00.001Z" }, "ends_at"],
      [{ starts_at: "2031-05-01T00:00:00", ends_at: "2031-05-02T00:00:00Z" }, "starts_at"],
      [{ starts_at, ends_at: "2031-05-02" }, "ends_at"],
      [{ starts_at, ends_at: "tomorrow" }, "ends_at"],
      [{ starts_at: 1_900_000_000_000, ends_at: "2031-05-02T00:00:00Z" }, "starts_at"],
      [{ starts_at: "2031-02-30T00:00:00Z", ends_at: "2031-05-02T00:00:00Z" }, "starts_at"],
      [{ starts_at }, "ends_at"],
      [{ ends_at: starts_at }, "starts_at"],
      [{ starts_at, ends_at: "2031-05-02T00:00:00Z", reason: "x".repeat(501) }, "reason"],
      [{ starts_at, ends_at: "2031-05-02T00:00:00Z", reason: "a\u0000b" }, "reason"],
      [{ starts_at, ends_at: "2031-05-02T00:00:00Z", reason: 5 }, "reason"],
      [{ starts_at, ends_at: "2031-05-02T00:00:00Z", id: "7" }, "id"],
      [{ starts_at, ends_at: "2031-05-02T00:00:00Z", project: "x" }, "project"],
    ];
    for (const [body, field] of cases) {
      const res = await api.post(path(project), body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.code, "validation_failed");
      assert.deepEqual(
        res.body.error.details.map((d: { path: string }) => d.path),
        [field],
        JSON.stringify(body),
      );
    }
    assert.deepEqual((await api.get(path(project))).body, { data: [], meta: { count: 0 } });
  });

  test("a window of exactly 366 days and a reason of 500 characters are accepted", async ({ api }) => {
    const project = await newProject(api);
    const res = await api.post(path(project), {
      starts_at: "2031-01-01T00:00:00Z",
      ends_at: "2032-01-02T00:00:00Z",
      reason: "r".repeat(500),
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(
      Date.parse(res.body.data.ends_at) - Date.parse(res.body.data.starts_at),
      366 * DAY,
    );
  });

  test("a missing project is 404 for the list and for a create", async ({ api }) => {
    const missing = uniqueName("missing");
    const listed = await api.get(path(missing));
    const created = await api.post(path(missing), {
      starts_at: fromNow(HOUR),
      ends_at: fromNow(2 * HOUR),
    });
    for (const res of [listed, created]) {
      assert.equal(res.status, 404);
      assert.equal(res.body.error.message, "Project not found");
    }
  });

  test("deleting a window answers 204, then 404; another project's window is not reachable", async ({ api }) => {
    const a = await newProject(api);
    const b = await newProject(api);
    const w = await pastActiveUpcoming(api, a);
    const other = await api.delete(`${path(b)}/${w.active.id}`);
    assert.equal(other.status, 404);
    assert.equal(other.body.error.message, "Maintenance window not found");
    const missingProject = await api.delete(`${path(uniqueName())}/${w.active.id}`);
    assert.equal(missingProject.status, 404);

    const res = await api.delete(`${path(a)}/${w.active.id}`);
    assert.equal(res.status, 204);
    assert.equal(res.text, "");
    assert.equal((await api.delete(`${path(a)}/${w.active.id}`)).status, 404);
    assert.deepEqual((await api.get(path(a))).body.data, [w.past, w.upcoming]);
    for (const id of ["abc", "0", "-1", "1.0", "99999999999999999999", "9223372036854775808"]) {
      const bad = await api.delete(`${path(a)}/${id}`);
      assert.equal(bad.status, 404, id);
      assert.equal(bad.body.error.message, "Maintenance window not found");
    }
    assert.equal((await api.get(path(a))).body.meta.count, 2);
  });

  test("deleting the project drops its windows", async ({ api, app }) => {
    const project = await newProject(api);
    await pastActiveUpcoming(api, project);
    assert.equal((await api.delete(`/api/v1/projects/${project}`)).status, 200);
    const rows = await app.database.db.selectFrom("maintenance_windows").select("id")
      .where("project", "=", project).execute();
    assert.equal(rows.length, 0);
  });

  test(`a project holds at most ${MAX_MAINTENANCE_WINDOWS} windows: one more is 409`, async ({ api, app }) => {
    const project = await newProject(api);
    const start = Date.parse("2035-01-01T00:00:00Z");
    await app.database.db.insertInto("maintenance_windows").values(
      Array.from({ length: MAX_MAINTENANCE_WINDOWS - 1 }, (_, i) => ({
        project,
        starts_at: new Date(start + i * DAY),
        ends_at: new Date(start + i * DAY + HOUR),
      })),
    ).execute();
    const body = { starts_at: fromNow(HOUR), ends_at: fromNow(2 * HOUR) };
    const last = await api.post(path(project), body);
    assert.equal(last.status, 201);
    const over = await api.post(path(project), body);
    assert.equal(over.status, 409);
    assert.equal(over.body.error.code, "conflict");
    assert.equal(
      over.body.error.message,
      `A project holds at most ${MAX_MAINTENANCE_WINDOWS} maintenance windows`,
    );
    assert.equal((await api.get(path(project))).body.meta.count, MAX_MAINTENANCE_WINDOWS);
    // Deleting one makes room again.
    assert.equal((await api.delete(`${path(project)}/${last.body.data.id}`)).status, 204);
    assert.equal((await api.post(path(project), body)).status, 201);
  });

  test("isInMaintenance: from starts_at, up to but not including ends_at, per project", async ({ api, app }) => {
    const project = await newProject(api);
    const other = await newProject(api);
    const starts = "2031-07-01T10:00:00.000Z";
    const ends = "2031-07-01T11:00:00.000Z";
    assert.equal((await api.post(path(project), { starts_at: starts, ends_at: ends })).status, 201);
    const db = app.database.db;
    const at = (iso: string, ms = 0) => new Date(Date.parse(iso) + ms);
    assert.equal(await isInMaintenance(db, project, at(starts, -1)), false);
    assert.equal(await isInMaintenance(db, project, at(starts)), true);
    assert.equal(await isInMaintenance(db, project, at(ends, -1)), true);
    assert.equal(await isInMaintenance(db, project, at(ends)), false);
    assert.equal(await isInMaintenance(db, other, at(starts, 1)), false);
  });

  test("the same procedures answer on /trpc", async ({ api }) => {
    const project = await newProject(api);
    const created = await api.post("/trpc/maintenance.create", {
      project,
      starts_at: fromNow(HOUR),
      ends_at: fromNow(2 * HOUR),
    });
    assert.equal(created.status, 200);
    const window = created.body.result.data.data;
    assert.equal(window.state, "upcoming");
    const input = encodeURIComponent(JSON.stringify({ project, state: "upcoming" }));
    const listed = await api.get(`/trpc/maintenance.list?input=${input}`);
    assert.deepEqual(listed.body.result.data, { data: [window], meta: { count: 1 } });
    const bad = await api.post("/trpc/maintenance.create", {
      project,
      starts_at: fromNow(2 * HOUR),
      ends_at: fromNow(HOUR),
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.data.error.details[0].path, "ends_at");
    const deleted = await api.post("/trpc/maintenance.delete", { project, id: window.id });
    assert.equal(deleted.status, 200);
    const again = await api.post("/trpc/maintenance.delete", { project, id: window.id });
    assert.equal(again.status, 404);
  });
});

Deno.test("stateAt: upcoming before starts_at, active until ends_at, past from ends_at", () => {
  const window = {
    starts_at: new Date("2031-01-01T00:00:00Z"),
    ends_at: new Date("2031-01-02T00:00:00Z"),
  };
  const at = (iso: string) => stateAt(window, new Date(iso));
  assert.equal(at("2030-12-31T23:59:59.999Z"), "upcoming");
  assert.equal(at("2031-01-01T00:00:00Z"), "active");
  assert.equal(at("2031-01-01T23:59:59.999Z"), "active");
  assert.equal(at("2031-01-02T00:00:00Z"), "past");
});
