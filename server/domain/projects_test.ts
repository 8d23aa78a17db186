import assert from "node:assert/strict";
import { sql } from "kysely";
import { createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
import {
  apiSuite,
  createPostgresDatabase,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../testing/app.ts";
import { startTarget } from "../testing/target_server.ts";
import { deleteProject } from "./projects.ts";

apiSuite("projects", (test) => {
  test("creating a project answers 201 and starts it enabled", async ({ api }) => {
    const name = uniqueName();
    const res = await api.post("/api/v1/projects", {
      project: name,
      label: "Shop",
      description: "d",
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { data: { project: name } });
    const got = await api.get(`/api/v1/projects/${name}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, {
      data: {
        project: name,
        label: "Shop",
        description: "d",
        status: "enabled",
        default_locations: null,
      },
    });
  });

  test("label and description may be null or left out", async ({ api }) => {
    const a = uniqueName();
    const b = uniqueName();
    assert.equal(
      (await api.post("/api/v1/projects", { project: a, label: null, description: null })).status,
      201,
    );
    assert.equal((await api.post("/api/v1/projects", { project: b })).status, 201);
    const got = await api.get(`/api/v1/projects/${b}`);
    assert.deepEqual(got.body.data, {
      project: b,
      label: null,
      description: null,
      status: "enabled",
      default_locations: null,
    });
  });

  test("creating a project that exists answers 409 and changes nothing", async ({ api }) => {
    const name = uniqueName();
    await api.post("/api/v1/projects", { project: name, label: "first" });
    const res = await api.post("/api/v1/projects", { project: name, label: "second" });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, "conflict");
    assert.equal(res.body.error.message, "Project already exists");
    assert.equal((await api.get(`/api/v1/projects/${name}`)).body.data.label, "first");
  });

  test("project names are case-sensitive", async ({ api }) => {
    const name = uniqueName("Case");
    assert.equal((await api.post("/api/v1/projects", { project: name })).status, 201);
    assert.equal((await api.post("/api/v1/projects", { project: name.toLowerCase() })).status, 201);
  });

  test("names that break the rules are refused with 422 and details", async ({ api }) => {
    const bad = ["", "-lead", ".dot", "has space", "slash/x", "é", "x".repeat(65), 42, null];
    for (const project of bad) {
      const res = await api.post("/api/v1/projects", { project });
      assert.equal(res.status, 422, `name ${JSON.stringify(project)}`);
      assert.equal(res.body.error.code, "validation_failed");
      assert.equal(res.body.error.details[0].path, "project");
    }
    const longest = `a${uniqueName().replaceAll("-", "")}`.padEnd(64, "z");
    assert.equal((await api.post("/api/v1/projects", { project: longest })).status, 201);
    assert.equal(
      (await api.post("/api/v1/projects", { project: "A1._-z" + uniqueName() })).status,
      201,
    );
  });

  test("a create body is strict: status, unknown fields and a missing name are 422", async ({ api }) => {
    const name = uniqueName();
    for (const body of [{ project: name, status: "enabled" }, { project: name, owner: "x" }, {}]) {
      const res = await api.post("/api/v1/projects", body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.code, "validation_failed");
    }
    const res = await api.post("/api/v1/projects", { project: name, owner: "x" });
    assert.deepEqual(res.body.error.details, [{ path: "owner", message: "is not a known field" }]);
    assert.equal((await api.get(`/api/v1/projects/${name}`)).status, 404);
  });

  test("text with a NUL character is refused", async ({ api }) => {
    const name = uniqueName();
    const res = await api.post("/api/v1/projects", { project: name, label: "a\u0000b" });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.details[0].path, "label");
  });

  test("text with a lone surrogate is refused on every write, naming the field, and changes nothing", async ({ api }) => {
    const name = uniqueName();
    assert.equal(
      (await api.post("/api/v1/projects", { project: name, label: "L", description: "D" })).status,
      201,
    );
    const before = (await api.get(`/api/v1/projects/${name}`)).body;
    const other = uniqueName();
    for (const [field, value] of [["label", "x\udc00y"], ["description", "\ud800"]]) {
      const writes: [string, () => ReturnType<TestClient["post"]>][] = [
        ["POST", () => api.post("/api/v1/projects", { project: other, [field]: value })],
        ["PATCH", () => api.patch(`/api/v1/projects/${name}`, { [field]: value })],
        [
          "projects.create",
          () => api.post("/trpc/projects.create", { project: other, [field]: value }),
        ],
        [
          "projects.update",
          () => api.post("/trpc/projects.update", { project: name, [field]: value }),
        ],
      ];
      for (const [where, write] of writes) {
        const res = await write();
        assert.equal(res.status, 422, `${field}, ${where}`);
        const error = where.includes(".") ? res.body.error.data.error : res.body.error;
        assert.deepEqual(error.details, [
          { path: field, message: "must not contain an unpaired UTF-16 surrogate" },
        ]);
      }
    }
    assert.deepEqual((await api.get(`/api/v1/projects/${name}`)).body, before);
    assert.equal((await api.get(`/api/v1/projects/${other}`)).status, 404);
    // A pair is one character, stored and returned as sent.
    const res = await api.patch(`/api/v1/projects/${name}`, { label: "\ud83d\ude00" });
    assert.equal(res.status, 200);
    assert.equal((await api.get(`/api/v1/projects/${name}`)).body.data.label, "\u{1F600}");
  });

  test("listing returns every project ordered by name with a count", async ({ api }) => {
    const prefix = uniqueName();
    for (const n of ["b", "A", "a", "c"]) {
      await api.post("/api/v1/projects", { project: `${prefix}${n}` });
    }
    const res = await api.get("/api/v1/projects");
    assert.equal(res.status, 200);
    const names: string[] = res.body.data.map((p: { project: string }) => p.project);
    assert.equal(res.body.meta.count, names.length);
    assert.deepEqual(names, [...names].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
    assert.deepEqual(
      names.filter((n) => n.startsWith(prefix)),
      ["A", "a", "b", "c"].map((n) => prefix + n),
    );
  });

  test("the project filter matches the exact name only", async ({ api }) => {
    const name = uniqueName();
    await api.post("/api/v1/projects", { project: name });
    await api.post("/api/v1/projects", { project: `${name}x` });
    const res = await api.get(`/api/v1/projects?project=${name}`);
    assert.deepEqual(res.body, {
      data: [{
        project: name,
        label: null,
        description: null,
        status: "enabled",
        default_locations: null,
      }],
      meta: { count: 1, next_after: null },
    });
    const none = await api.get(`/api/v1/projects?project=${name}-missing`);
    assert.deepEqual(none.body, { data: [], meta: { count: 0, next_after: null } });
  });

  test("getting a missing or impossible project answers 404", async ({ api }) => {
    for (const name of [uniqueName(), "-bad", "x".repeat(70)]) {
      const res = await api.get(`/api/v1/projects/${name}`);
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { error: { code: "not_found", message: "Project not found" } });
    }
  });

  test("patching updates the fields sent and moves the status", async ({ api }) => {
    const name = uniqueName();
    await api.post("/api/v1/projects", { project: name, label: "L", description: "D" });
    let res = await api.patch(`/api/v1/projects/${name}`, { status: "disabled", label: "L2" });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { project: name } });
    assert.deepEqual((await api.get(`/api/v1/projects/${name}`)).body.data, {
      project: name,
      label: "L2",
      description: "D",
      status: "disabled",
      default_locations: null,
    });
    res = await api.patch(`/api/v1/projects/${name}`, { status: "enabled", description: null });
    assert.equal(res.status, 200);
    assert.deepEqual((await api.get(`/api/v1/projects/${name}`)).body.data, {
      project: name,
      label: "L2",
      description: null,
      status: "enabled",
      default_locations: null,
    });
  });

  test("a status of null leaves the status as it is", async ({ api }) => {
    const name = uniqueName();
    await api.post("/api/v1/projects", { project: name });
    await api.patch(`/api/v1/projects/${name}`, { status: "disabled" });
    const res = await api.patch(`/api/v1/projects/${name}`, { status: null, label: "x" });
    assert.equal(res.status, 200);
    const got = (await api.get(`/api/v1/projects/${name}`)).body.data;
    assert.equal(got.status, "disabled");
    assert.equal(got.label, "x");
  });

  test("bad patches answer 422 and change nothing", async ({ api }) => {
    const name = uniqueName();
    await api.post("/api/v1/projects", { project: name, label: "keep" });
    const cases: [unknown, string][] = [
      [{}, "No fields were provided"],
      [{ status: "paused", label: "changed" }, "Validation failed"],
      [{ label: 5 }, "Validation failed"],
      [{ label: "changed", owner: "x" }, "Validation failed"],
    ];
    for (const [body, message] of cases) {
      const res = await api.patch(`/api/v1/projects/${name}`, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.code, "validation_failed");
      assert.equal(res.body.error.message, message);
    }
    assert.equal((await api.get(`/api/v1/projects/${name}`)).body.data.label, "keep");
  });

  test("patching a missing project answers 404", async ({ api }) => {
    const res = await api.patch(`/api/v1/projects/${uniqueName()}`, { label: "x" });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, "not_found");
  });

  test("deleting archives the project and its probes, then removes them", async ({ api, app }) => {
    const name = uniqueName();
    await api.post("/api/v1/projects", { project: name, label: "gone" });
    await api.post(`/api/v1/projects/${name}/probes`, { url: "http://b.test/" });
    await api.post(`/api/v1/projects/${name}/probes`, { url: "http://a.test/", body: { k: 1 } });
    const res = await api.delete(`/api/v1/projects/${name}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, { project: name, deleted: true, archived: true });
    assert.equal(typeof res.body.meta.message, "string");
    assert.equal((await api.get(`/api/v1/projects/${name}`)).status, 404);
    assert.deepEqual((await api.get(`/api/v1/projects/${name}/probes`)).body.data, []);

    const archived = await app.database.db.selectFrom("archived_projects").selectAll()
      .where("project", "=", name).execute();
    assert.equal(archived.length, 1);
    assert.ok(archived[0].archived_at instanceof Date);
    const snapshot = archived[0].snapshot as {
      project: { name: string; label: string };
      probes: { url: string; body: unknown }[];
    };
    assert.equal(snapshot.project.name, name);
    assert.equal(snapshot.project.label, "gone");
    assert.deepEqual(snapshot.probes.map((p) => p.url), ["http://a.test/", "http://b.test/"]);
    assert.deepEqual(snapshot.probes[0].body, { k: 1 });

    assert.equal((await api.post("/api/v1/projects", { project: name })).status, 201);
    assert.equal((await api.get(`/api/v1/projects/${name}`)).body.data.label, null);
  });

  test("the archive holds the project and its probes as they were", async ({ api, app }) => {
    const name = uniqueName();
    await api.post("/api/v1/projects", { project: name, label: "l", description: "d" });
    await api.post(`/api/v1/projects/${name}/probes`, {
      url: "http://z.test/",
      method: "POST",
      headers: { "x-b": "2", "x-a": "1" },
      body: { z: [1, null, "é"], a: null },
      latency: 250,
    });
    await api.post(`/api/v1/projects/${name}/probes`, { url: "http://Y.test/" });
    const probes = (await api.get(`/api/v1/projects/${name}/probes`)).body.data;
    const { rows } = await sql<{ url: string; created_at: Date }>`
      select url, created_at from probes where project = ${name}`.execute(app.database.db);
    assert.equal((await api.delete(`/api/v1/projects/${name}`)).status, 200);

    const [{ snapshot }] = await app.database.db.selectFrom("archived_projects")
      .select("snapshot").where("project", "=", name).execute();
    const archived = snapshot as {
      project: Record<string, unknown>;
      probes: Record<string, unknown>[];
      incidents: unknown[];
    };
    const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    assert.deepEqual(Object.keys(archived), ["project", "probes", "incidents"]);
    assert.deepEqual(archived.incidents, [], "none of its probes ever went down");
    assert.deepEqual(Object.keys(archived.project), [
      "name",
      "label",
      "description",
      "status",
      "default_locations",
      "created_at",
      "updated_at",
    ]);
    assert.deepEqual(
      { ...archived.project, created_at: "", updated_at: "" },
      {
        name,
        label: "l",
        description: "d",
        status: "enabled",
        default_locations: null,
        created_at: "",
        updated_at: "",
      },
    );
    assert.match(String(archived.project.created_at), iso);
    // The probes as the API answered them, in the same order, with their times as Date.toJSON;
    // their definitions only: the state comes from runs, and starts again with a new project;
    // the effective interval and timeout are the service's settings of the day, not the probe's.
    assert.deepEqual(
      probes.map((p: Record<string, unknown>) => [p.state, p.state_since]),
      [["unknown", null], ["unknown", null]],
    );
    assert.deepEqual(
      archived.probes.map(({ created_at: _c, updated_at: _u, ...probe }) => probe),
      probes.map((
        {
          state: _s,
          state_since: _since,
          effective_interval_seconds: _ei,
          effective_timeout_ms: _et,
          effective_locations: _el,
          location_states: _ls,
          ...probe
        }: Record<string, unknown>,
      ) => probe),
    );
    for (const probe of archived.probes) {
      const row = rows.find((r) => r.url === probe.url)!;
      assert.equal(probe.created_at, row.created_at.toJSON());
      assert.match(String(probe.updated_at), iso);
    }
  });

  test("the archive keeps its probes' incidents, resolved as deleted", async ({ api, app }) => {
    const name = uniqueName();
    await api.post("/api/v1/projects", { project: name });
    const target = await startTarget();
    try {
      const created = await api.post(`/api/v1/projects/${name}/probes`, {
        url: `${target.origin}/status/500`,
        label: "checkout",
      });
      const path = `/api/v1/projects/${name}/probes/${created.body.data.probe_id}`;
      // Three failing runs: the default failure_threshold, so the third opens an incident.
      const runs = [];
      for (let i = 0; i < 3; i++) {
        const res = await api.post(`${path}/run`);
        assert.equal(res.status, 200, res.text);
        runs.push(res.body.data);
      }
      assert.deepEqual(runs.map((r) => r.outcome), ["down", "down", "down"]);
      const probe = (await api.get(path)).body.data;
      assert.deepEqual([probe.state, probe.state_since], ["down", runs[2].started_at]);

      const from = Date.now();
      assert.equal((await api.delete(`/api/v1/projects/${name}`)).status, 200);
      const to = Date.now();
      const [{ snapshot }] = await app.database.db.selectFrom("archived_projects")
        .select("snapshot").where("project", "=", name).execute();
      const { incidents } = snapshot as { incidents: Record<string, unknown>[] };
      assert.equal(incidents.length, 1);
      const [incident] = incidents;
      const resolvedAt = Date.parse(String(incident.resolved_at));
      assert.ok(resolvedAt >= from && resolvedAt <= to, `resolved at ${incident.resolved_at}`);
      assert.deepEqual(incident, {
        id: incident.id,
        probe_id: created.body.data.probe_id,
        label: "checkout",
        started_at: runs[2].started_at,
        resolved_at: incident.resolved_at,
        resolution: "deleted",
        cause: "answered HTTP 500, expected a status below 400",
        runs_failed: 3,
        last_error: "HTTP 500",
        acknowledged_at: null,
      });
      assert.match(String(incident.id), /^[1-9][0-9]*$/);
    } finally {
      await target.close();
    }
  });

  test("deleting a missing project answers 404", async ({ api }) => {
    const res = await api.delete(`/api/v1/projects/${uniqueName()}`);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.message, "Project not found");
  });

  test("a failed archive answers 500, hides the cause and loses nothing", async ({ api, app }) => {
    const name = uniqueName("doomed");
    await api.post("/api/v1/projects", { project: name });
    await api.post(`/api/v1/projects/${name}/probes`, { url: "http://keep.test/" });
    const db = app.database.db;
    await sql.raw(`
      create function refuse_archive() returns trigger language plpgsql as $$
      begin
        if new.project like 'doomed-%' then raise exception 'secret driver detail'; end if;
        return new;
      end $$`).execute(db);
    await sql.raw(`create trigger refuse_archive before insert on archived_projects
        for each row execute function refuse_archive()`).execute(db);
    try {
      const res = await api.delete(`/api/v1/projects/${name}`);
      assert.equal(res.status, 500);
      assert.deepEqual(res.body, { error: { code: "internal", message: "Internal server error" } });
      assert.ok(!res.text.includes("secret"));
      assert.equal((await api.get(`/api/v1/projects/${name}`)).status, 200);
      assert.equal((await api.get(`/api/v1/projects/${name}/probes`)).body.meta.count, 1);
    } finally {
      await sql.raw(`drop trigger refuse_archive on archived_projects`).execute(db);
      await sql.raw(`drop function refuse_archive()`).execute(db);
    }
  });

  test("simultaneous creates of one project give one 201 and the rest 409", async ({ api }) => {
    const name = uniqueName();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => api.post("/api/v1/projects", { project: name })),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, ...Array(11).fill(409)]);
  });
});

Deno.test({
  name: "a project delete has its own budget, not the statement timeout of requests [postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const app = await createApp({
      database: { kind: "postgres", url, statementTimeoutMs: 300, queryDeadlineMs: 500 },
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
    });
    try {
      const api = new TestClient(app.handler);
      const db = app.database.db;
      // An archive that takes longer than the statement timeout (300 ms) and the query deadline
      // (500 ms) of requests.
      await sql.raw(`
        create function slow_archive() returns trigger language plpgsql as $$
        begin perform pg_sleep(0.8); return new; end $$`).execute(db);
      await sql.raw(`create trigger slow_archive before insert on archived_projects
          for each row execute function slow_archive()`).execute(db);
      const slow = await sql`select pg_sleep(0.8)`.execute(db).then(() => null, (e) => e);
      assert.equal(slow?.code, "57014", "other statements are cut at 300 ms");

      for (const name of ["slow-a", "slow-b"]) {
        assert.equal((await api.post("/api/v1/projects", { project: name })).status, 201);
        await api.post(`/api/v1/projects/${name}/probes`, { url: "http://a.test/" });
      }
      const res = await api.delete("/api/v1/projects/slow-a");
      assert.equal(res.status, 200, res.text);
      assert.equal((await api.get("/api/v1/projects/slow-a")).status, 404);

      // Its own budget does bound it: past it, the delete is cancelled and nothing changes.
      const error = await deleteProject({ db, project: "slow-b", timeoutMs: 200 })
        .then(() => null, (e) => e);
      assert.equal(error?.code, "57014");
      assert.equal((await api.get("/api/v1/projects/slow-b/probes")).body.meta.count, 1);
      const archived = await db.selectFrom("archived_projects").select("project").execute();
      assert.deepEqual(archived.map((a) => a.project), ["slow-a"]);
    } finally {
      await app.close();
      await drop();
    }
  },
});
