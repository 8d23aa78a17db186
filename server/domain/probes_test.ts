import assert from "node:assert/strict";
import { apiSuite, type TestClient, uniqueName } from "../testing/app.ts";

async function project(api: TestClient): Promise<string> {
  const name = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project: name })).status, 201);
  return name;
}

apiSuite("probes", (test) => {
  test("creating a probe answers 201 with its id, and reads return its defaults", async ({ api }) => {
    const p = await project(api);
    const res = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://example.com/health",
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.meta, { created: true });
    assert.equal(res.body.data.project, p);
    assert.equal(res.body.data.url, "https://example.com/health");
    assert.match(res.body.data.probe_id, /^[0-9a-f]{16}$/);
    const got = await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, {
      data: {
        project: p,
        probe_id: res.body.data.probe_id,
        url: "https://example.com/health",
        method: "GET",
        headers: {},
        body: null,
        latency: null,
      },
    });
  });

  test("every field is stored and returned as sent", async ({ api }) => {
    const p = await project(api);
    const body = { z: 1, a: [true, null, 1.5, "x"], nested: { b: 2, a: 1 } };
    const headers = { "X-Trace": "abc", accept: "application/json" };
    const res = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "http://example.com/post",
      method: "post",
      headers,
      body,
      latency: 250,
    });
    assert.equal(res.status, 201);
    const got = (await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`)).body.data;
    assert.equal(got.method, "POST");
    assert.deepEqual(got.headers, headers);
    assert.deepEqual(Object.keys(got.headers), ["X-Trace", "accept"]);
    assert.deepEqual(got.body, body);
    assert.deepEqual(Object.keys(got.body), ["z", "a", "nested"]);
    assert.equal(got.latency, 250);
  });

  test("any JSON value is a body, null included", async ({ api }) => {
    const p = await project(api);
    const values = ["plain text", 42, [1, 2], null, false, { "": "" }];
    for (const [i, body] of values.entries()) {
      const res = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `http://b.test/${i}`,
        body,
      });
      assert.equal(res.status, 201, JSON.stringify(body));
      const got = await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`);
      assert.deepEqual(got.body.data.body, body);
    }
  });

  test("the body-named form creates under the project it names", async ({ api }) => {
    const p = await project(api);
    const res = await api.post("/api/v1/probes", { project: p, url: "http://named.test/" });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, {
      data: { project: p, url: "http://named.test/", probe_id: res.body.data.probe_id },
      meta: { created: true },
    });
    const again = await api.post("/api/v1/probes", { project: p, url: "http://named.test" });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.meta, { created: false });
  });

  test("creating for a missing project answers 404 in both forms", async ({ api }) => {
    const missing = uniqueName();
    let res = await api.post(`/api/v1/projects/${missing}/probes`, { url: "http://a.test/" });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: { code: "not_found", message: "Project not found" } });
    res = await api.post("/api/v1/probes", { project: missing, url: "http://a.test/" });
    assert.equal(res.status, 404);
    res = await api.post("/api/v1/projects/-bad-/probes", { url: "http://a.test/" });
    assert.equal(res.status, 404);
  });

  test("bad create bodies answer 422 and store nothing", async ({ api }) => {
    const p = await project(api);
    const url = "http://strict.test/";
    const bad: Record<string, unknown>[] = [
      { url, probe_id: "abc" },
      { url, extra: 1 },
      { url, project: p },
      {},
      { url: "ftp://example.com/" },
      { url: "/relative" },
      { url: "not a url" },
      { url: `http://example.com/${"a".repeat(2040)}` },
      { url: "http://exa\u0000mple.com/" },
      { url, method: "TRACE" },
      { url, method: 5 },
      { url, headers: { "bad name": "x" } },
      { url, headers: { "X-A": "1", "x-a": "2" } },
      { url, headers: { "X-A": 1 } },
      { url, headers: { "X-A": "line\r\nbreak" } },
      { url, headers: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`h${i}`, "v"])) },
      { url, headers: ["x"] },
      { url, body: { text: "nul\u0000" } },
      { url, body: { ["k\u0000"]: 1 } },
      { url, latency: 0 },
      { url, latency: 600_001 },
      { url, latency: 1.5 },
      { url, latency: "100" },
    ];
    for (const body of bad) {
      const res = await api.post(`/api/v1/projects/${p}/probes`, body);
      assert.equal(res.status, 422, JSON.stringify(body).slice(0, 120));
      assert.equal(res.body.error.code, "validation_failed");
      assert.ok(res.body.error.details.length > 0);
    }
    const missingProject = await api.post("/api/v1/probes", { url });
    assert.equal(missingProject.status, 422);
    const badProject = await api.post("/api/v1/probes", { project: "-x", url });
    assert.equal(badProject.status, 422);
    assert.deepEqual((await api.get(`/api/v1/projects/${p}/probes`)).body.meta, { count: 0 });
  });

  test("fifty headers are allowed", async ({ api }) => {
    const p = await project(api);
    const headers = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`h${i}`, "v"]));
    const res = await api.post(`/api/v1/projects/${p}/probes`, { url: "http://h.test/", headers });
    assert.equal(res.status, 201);
  });

  test("URLs are normalised and compared normalised", async ({ api }) => {
    const p = await project(api);
    const cases: [string, string][] = [
      ["HTTP://Example.COM:80", "http://example.com/"],
      ["https://Example.com:443/a?b=1#frag", "https://example.com/a?b=1"],
      ["http://example.com:8080/x/../y", "http://example.com:8080/y"],
    ];
    for (const [input, stored] of cases) {
      const res = await api.post(`/api/v1/projects/${p}/probes`, { url: input });
      assert.equal(res.status, 201, input);
      assert.equal(res.body.data.url, stored);
    }
    const same = await api.post(`/api/v1/projects/${p}/probes`, { url: "http://EXAMPLE.com/#top" });
    assert.equal(same.status, 200);
    assert.equal((await api.get(`/api/v1/projects/${p}/probes`)).body.meta.count, 3);
  });

  test("a rewrite replaces the whole definition and fields not sent take defaults", async ({ api }) => {
    const p = await project(api);
    const first = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "http://rw.test/",
      method: "POST",
      headers: { A: "1" },
      body: { x: 1 },
      latency: 100,
    });
    const second = await api.post(`/api/v1/projects/${p}/probes`, { url: "http://rw.test/" });
    assert.equal(second.status, 200);
    assert.deepEqual(second.body.meta, { created: false });
    assert.notEqual(second.body.data.probe_id, first.body.data.probe_id);
    const list = (await api.get(`/api/v1/projects/${p}/probes`)).body;
    assert.equal(list.meta.count, 1);
    assert.deepEqual(list.data[0], {
      project: p,
      probe_id: second.body.data.probe_id,
      url: "http://rw.test/",
      method: "GET",
      headers: {},
      body: null,
      latency: null,
    });
    assert.equal(
      (await api.get(`/api/v1/projects/${p}/probes/${first.body.data.probe_id}`)).status,
      404,
    );
  });

  test("probe ids follow method and URL only", async ({ api }) => {
    const a = await project(api);
    const b = await project(api);
    const idOf = async (p: string, body: Record<string, unknown>) =>
      (await api.post(`/api/v1/projects/${p}/probes`, body)).body.data.probe_id;
    const inA = await idOf(a, { url: "http://id.test/" });
    const inB = await idOf(b, { url: "HTTP://ID.test", headers: { X: "y" } });
    assert.equal(inA, inB);
    const post = await idOf(b, { url: "http://id.test/", method: "POST" });
    assert.notEqual(post, inA);
    // Both are addressed by project and id.
    assert.equal((await api.get(`/api/v1/projects/${a}/probes/${inA}`)).body.data.method, "GET");
    assert.equal((await api.get(`/api/v1/projects/${b}/probes/${post}`)).body.data.method, "POST");
  });

  test("lists are ordered by project, then URL, and can be filtered", async ({ api }) => {
    const a = await project(api);
    const b = await project(api);
    for (const u of ["http://c.test/", "http://a.test/", "http://b.test/"]) {
      await api.post(`/api/v1/projects/${b}/probes`, { url: u });
      await api.post(`/api/v1/projects/${a}/probes`, { url: u });
    }
    const all = (await api.get("/api/v1/probes")).body;
    assert.equal(all.meta.count, all.data.length);
    const keys = all.data.map((x: { project: string; url: string }) => `${x.project} ${x.url}`);
    assert.deepEqual(keys, [...keys].sort((x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0)));
    for (const probe of all.data) {
      assert.deepEqual(Object.keys(probe).sort(), [
        "body",
        "headers",
        "latency",
        "method",
        "probe_id",
        "project",
        "url",
      ]);
    }
    const onlyA = (await api.get(`/api/v1/probes?project=${a}`)).body;
    assert.equal(onlyA.meta.count, 3);
    assert.deepEqual(onlyA.data.map((x: { url: string }) => x.url), [
      "http://a.test/",
      "http://b.test/",
      "http://c.test/",
    ]);
    const scoped = (await api.get(`/api/v1/projects/${b}/probes`)).body;
    assert.equal(scoped.meta.count, 3);
    assert.ok(scoped.data.every((x: { project: string }) => x.project === b));
  });

  test("listing the probes of a missing project is an empty list", async ({ api }) => {
    const res = await api.get(`/api/v1/projects/${uniqueName()}/probes`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: [], meta: { count: 0 } });
  });

  test("getting a missing probe answers 404", async ({ api }) => {
    const p = await project(api);
    const res = await api.get(`/api/v1/projects/${p}/probes/0000000000000000`);
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: { code: "not_found", message: "Probe not found" } });
  });

  test("patching the URL or method changes the probe id; other fields keep it", async ({ api }) => {
    const p = await project(api);
    const created = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "http://old.test/",
      headers: { A: "1" },
      body: { keep: true },
      latency: 300,
    });
    const oldId = created.body.data.probe_id;
    const same = await api.patch(`/api/v1/projects/${p}/probes/${oldId}`, { latency: 500 });
    assert.equal(same.status, 200);
    assert.deepEqual(same.body, { data: { project: p, url: "http://old.test/", probe_id: oldId } });

    const moved = await api.patch(`/api/v1/projects/${p}/probes/${oldId}`, {
      url: "HTTP://New.test",
    });
    assert.equal(moved.status, 200);
    const newId = moved.body.data.probe_id;
    assert.notEqual(newId, oldId);
    assert.equal(moved.body.data.url, "http://new.test/");
    assert.equal((await api.get(`/api/v1/projects/${p}/probes/${oldId}`)).status, 404);
    const got = (await api.get(`/api/v1/projects/${p}/probes/${newId}`)).body.data;
    assert.deepEqual(got, {
      project: p,
      probe_id: newId,
      url: "http://new.test/",
      method: "GET",
      headers: { A: "1" },
      body: { keep: true },
      latency: 500,
    });

    const method = await api.patch(`/api/v1/projects/${p}/probes/${newId}`, {
      method: "head",
      body: null,
      latency: null,
    });
    assert.notEqual(method.body.data.probe_id, newId);
    const after =
      (await api.get(`/api/v1/projects/${p}/probes/${method.body.data.probe_id}`)).body.data;
    assert.equal(after.method, "HEAD");
    assert.equal(after.body, null);
    assert.equal(after.latency, null);
  });

  test("bad patches answer 422 and change nothing", async ({ api }) => {
    const p = await project(api);
    const a =
      (await api.post(`/api/v1/projects/${p}/probes`, { url: "http://a.test/", latency: 10 })).body
        .data;
    await api.post(`/api/v1/projects/${p}/probes`, { url: "http://b.test/" });
    const cases: [Record<string, unknown>, string][] = [
      [{}, "No fields were provided"],
      [{ url: "http://b.test" }, "Validation failed"],
      [{ url: "http://c.test/", method: "BREW" }, "Validation failed"],
      [{ latency: -1 }, "Validation failed"],
      [{ probe_id: "x" }, "Validation failed"],
      [{ project: "other", latency: 5 }, "Validation failed"],
    ];
    for (const [body, message] of cases) {
      const res = await api.patch(`/api/v1/projects/${p}/probes/${a.probe_id}`, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.message, message);
    }
    const got = (await api.get(`/api/v1/projects/${p}/probes/${a.probe_id}`)).body.data;
    assert.equal(got.url, "http://a.test/");
    assert.equal(got.latency, 10);
    assert.equal((await api.get(`/api/v1/projects/${p}/probes`)).body.meta.count, 2);
  });

  test("patching a missing probe answers 404", async ({ api }) => {
    const p = await project(api);
    const res = await api.patch(`/api/v1/projects/${p}/probes/ffffffffffffffff`, { latency: 5 });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.message, "Probe not found");
  });

  test("deleting a probe answers 204 with no body, then 404", async ({ api }) => {
    const p = await project(api);
    const id =
      (await api.post(`/api/v1/projects/${p}/probes`, { url: "http://del.test/" })).body.data
        .probe_id;
    const res = await api.delete(`/api/v1/projects/${p}/probes/${id}`);
    assert.equal(res.status, 204);
    assert.equal(res.text, "");
    assert.equal((await api.get(`/api/v1/projects/${p}/probes/${id}`)).status, 404);
    assert.equal((await api.delete(`/api/v1/projects/${p}/probes/${id}`)).status, 404);
  });

  test("simultaneous creates of one URL give one 201, the rest 200, one probe", async ({ api }) => {
    const p = await project(api);
    const answers = await Promise.all(
      Array.from(
        { length: 12 },
        (_, i) =>
          api.post(`/api/v1/projects/${p}/probes`, { url: "http://race.test/", latency: i + 1 }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [
      200,
      200,
      200,
      200,
      200,
      200,
      200,
      200,
      200,
      200,
      200,
      201,
    ]);
    assert.equal((await api.get(`/api/v1/projects/${p}/probes`)).body.meta.count, 1);
  });

  test("a project deleted while probes are added leaves no orphan and loses no acknowledged probe", async ({ api, app }) => {
    const p = await project(api);
    const creates = Array.from(
      { length: 20 },
      (_, i) => api.post(`/api/v1/projects/${p}/probes`, { url: `http://orphan.test/${i}` }),
    );
    const deletion = api.delete(`/api/v1/projects/${p}`);
    const answers = await Promise.all(creates);
    assert.equal((await deletion).status, 200);
    for (const a of answers) assert.ok([201, 404].includes(a.status), `status ${a.status}`);
    const live = await app.database.db.selectFrom("probes").select("url").where("project", "=", p)
      .execute();
    assert.deepEqual(live, []);
    const archive = await app.database.db.selectFrom("archived_projects").select("snapshot")
      .where("project", "=", p).executeTakeFirstOrThrow();
    const archivedUrls = new Set(
      (archive.snapshot as { probes: { url: string }[] }).probes.map((x) => x.url),
    );
    for (const a of answers.filter((x) => x.status === 201)) {
      assert.ok(
        archivedUrls.has(a.body.data.url),
        `${a.body.data.url} was acknowledged but not archived`,
      );
    }
  });
});
