import assert from "node:assert/strict";
import { sql } from "kysely";
import { apiSuite, uniqueName } from "../testing/app.ts";

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
      data: { project: name, label: "Shop", description: "d", status: "enabled" },
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
      data: [{ project: name, label: null, description: null, status: "enabled" }],
      meta: { count: 1 },
    });
    const none = await api.get(`/api/v1/projects?project=${name}-missing`);
    assert.deepEqual(none.body, { data: [], meta: { count: 0 } });
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
    });
    res = await api.patch(`/api/v1/projects/${name}`, { status: "enabled", description: null });
    assert.equal(res.status, 200);
    assert.deepEqual((await api.get(`/api/v1/projects/${name}`)).body.data, {
      project: name,
      label: "L2",
      description: null,
      status: "enabled",
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
