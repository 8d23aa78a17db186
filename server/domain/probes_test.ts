import assert from "node:assert/strict";
import fc from "fast-check";
import { createNetworkPolicy, parseNetworks } from "../outbound/network_policy.ts";
import { executeProbe } from "../runner/execute.ts";
import { apiSuite, type TestClient, uniqueName } from "../testing/app.ts";
import { startTarget } from "../testing/target_server.ts";

async function project(api: TestClient): Promise<string> {
  const name = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project: name })).status, 201);
  return name;
}

/** Read back as JSON with an own `__proto__` key, the way a JSON body arrives. */
const parsed = (json: string) => JSON.parse(json) as Record<string, unknown>;

/**
 * Values the service would store or send otherwise than they were sent, or that could never be
 * sent: each field on its own, with the path `details` must name.
 */
const ALTERED: [string, Record<string, unknown>, string][] = [
  ["a lone surrogate in a header value", { headers: { "X-A": "x\udc00y" } }, "headers.X-A"],
  ["a lone surrogate in a header name", { headers: { "x\ud800": "v" } }, "headers.x\ud800"],
  ["a header named __proto__", parsed('{"headers":{"__proto__":{"x":"1"}}}'), "headers.__proto__"],
  [
    "__proto__ with a string value",
    parsed('{"headers":{"__proto__":"v","A":"b"}}'),
    "headers.__proto__",
  ],
  ["a dotless i in the method", { method: "optıons" }, "method"],
  ["a long s in the method", { method: "poſt" }, "method"],
  ["a control character in a header value", { headers: { "X-A": "a\u0001b" } }, "headers.X-A"],
  ["a line separator in a header value", { headers: { "X-A": "a\u2028b" } }, "headers.X-A"],
  ["DEL in a header value", { headers: { "X-A": "a\u007fb" } }, "headers.X-A"],
  ["a character above U+00FF in a header value", { headers: { "X-A": "5\u20ac" } }, "headers.X-A"],
  // Sent as one byte, or as two (UTF-8) when the request has a body: not always what is stored.
  ["obs-text in a header value", { headers: { "X-A": "caf\u00e9" } }, "headers.X-A"],
  ["a header value padded with a space", { headers: { "X-A": " v" } }, "headers.X-A"],
  ["a header value ending in a tab", { headers: { "X-A": "v\t" } }, "headers.X-A"],
  ["a control character in a header name", { headers: { "a\u0001b": "v" } }, "headers.a\u0001b"],
  ["a line separator in a header name", { headers: { "a\u2028b": "v" } }, "headers.a\u2028b"],
  ["an empty Host (the URL's host would go instead)", { headers: { Host: "" } }, "headers.Host"],
  [
    "Transfer-Encoding",
    { headers: { "Transfer-Encoding": "chunked" } },
    "headers.Transfer-Encoding",
  ],
  ["Content-Length", { headers: { "content-length": "5" } }, "headers.content-length"],
  ["Connection", { headers: { Connection: "close" } }, "headers.Connection"],
  ["Keep-Alive", { headers: { "KEEP-ALIVE": "timeout=5" } }, "headers.KEEP-ALIVE"],
  ["Upgrade", { headers: { Upgrade: "websocket" } }, "headers.Upgrade"],
  ["TE", { headers: { te: "trailers" } }, "headers.te"],
  ["Trailer", { headers: { Trailer: "X-A" } }, "headers.Trailer"],
  [
    "Proxy-Connection",
    { headers: { "Proxy-Connection": "keep-alive" } },
    "headers.Proxy-Connection",
  ],
  ["a lone surrogate in the URL", { url: "http://altered.test/x\udc00y" }, "url"],
  ["a lone surrogate as the body", { body: "\udc00" }, "body"],
  ["a lone surrogate in a body key", { body: { "k\ud800": 1 } }, "body.k\ud800"],
  ["a lone surrogate deep in the body", { body: { a: ["ok", "\ud800"] } }, "body.a.1"],
];

/** A loopback target that records each request's bytes (as a binary string) and answers 200. */
function rawTarget() {
  const requests: string[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of listener) {
      (async () => {
        let text = "";
        const buffer = new Uint8Array(65536);
        while (!text.includes("\r\n\r\n")) {
          const n = await conn.read(buffer).catch(() => null);
          if (n === null) break;
          for (const byte of buffer.subarray(0, n)) text += String.fromCharCode(byte);
        }
        requests.push(text);
        const answer = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        await conn.write(new TextEncoder().encode(answer)).catch(() => 0);
        conn.close();
      })();
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/h`,
    requests,
    close: () => listener.close(),
  };
}

const loopbackAllowed = createNetworkPolicy(parseNetworks("127.0.0.0/8"));

const TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const VALUE_CHARS = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i))
  .filter((c) => c === "\t" || (c >= " " && c !== "\x7f"));

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
    assert.deepEqual((await api.get(`/api/v1/projects/${p}/probes`)).body.meta, {
      count: 0,
      next_after: null,
    });
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
    assert.deepEqual(res.body, { data: [], meta: { count: 0, next_after: null } });
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
  test("values that would be stored or sent altered answer 422 naming the field, on every write, and change nothing", async ({ api }) => {
    const p = await project(api);
    const existing = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "http://altered.test/",
      headers: { "X-Keep": "1" },
      latency: 7,
    });
    const id = existing.body.data.probe_id;
    const before = (await api.get(`/api/v1/projects/${p}/probes`)).body;
    for (const [what, fields, path] of ALTERED) {
      const url = "url" in fields ? {} : { url: "http://altered.test/" };
      const writes: [string, () => ReturnType<TestClient["post"]>][] = [
        [
          "POST /projects/{project}/probes (a rewrite)",
          () => api.post(`/api/v1/projects/${p}/probes`, { ...url, ...fields }),
        ],
        [
          "POST /projects/{project}/probes (new)",
          () => api.post(`/api/v1/projects/${p}/probes`, { url: "http://new.test/", ...fields }),
        ],
        ["POST /probes", () => api.post("/api/v1/probes", { project: p, ...url, ...fields })],
        ["PATCH", () => api.patch(`/api/v1/projects/${p}/probes/${id}`, fields)],
        ["probes.create", () => api.post("/trpc/probes.create", { project: p, ...url, ...fields })],
        [
          "probes.createWithProject",
          () => api.post("/trpc/probes.createWithProject", { project: p, ...url, ...fields }),
        ],
        [
          "probes.update",
          () => api.post("/trpc/probes.update", { project: p, probeId: id, ...fields }),
        ],
      ];
      for (const [where, write] of writes) {
        const res = await write();
        const label = `${what}, ${where}`;
        assert.equal(res.status, 422, label);
        const error = where.includes(".") ? res.body.error.data.error : res.body.error;
        assert.equal(error.code, "validation_failed", label);
        assert.ok(
          error.details.some((d: { path: string }) => d.path === path),
          `${label}: ${JSON.stringify(error.details)}`,
        );
      }
    }
    assert.deepEqual((await api.get(`/api/v1/projects/${p}/probes`)).body, before);
  });

  test("the seven methods in ASCII are accepted in any case; Host is a header like any other", async ({ api }) => {
    const p = await project(api);
    const methods = ["get", "Post", "pUT", "patch", "DELETE", "Head", "oPtIoNs"];
    for (const [i, method] of methods.entries()) {
      const res = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `http://m.test/${i}`,
        method,
        headers: { Host: "virtual.example" },
      });
      assert.equal(res.status, 201, method);
      const got = (await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`)).body;
      assert.equal(got.data.method, method.toUpperCase());
      assert.deepEqual(got.data.headers, { Host: "virtual.example" });
    }
  });

  test("a body with __proto__ keys and surrogate pairs, and headers with inner tabs, are kept as sent", async ({ api }) => {
    const p = await project(api);
    const body = parsed('{"__proto__":{"x":1},"emoji":"\\ud83d\\ude00"}');
    const headers = { "X-Tab": "a\tb c", "X-Empty": "", "X-All": VALUE_CHARS.join("").trim() };
    const res = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "http://kept.test/",
      headers,
      body,
    });
    assert.equal(res.status, 201);
    const got = (await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`)).body;
    assert.deepEqual(got.data.headers, headers);
    assert.ok(Object.hasOwn(got.data.body, "__proto__"));
    assert.deepEqual(got.data.body.__proto__, { x: 1 });
    assert.equal(got.data.body.emoji, "\u{1F600}");
  });

  test("every header the schema accepts is sent by the runner's request byte for byte, with or without a body", async ({ api }) => {
    const p = await project(api);
    const target = rawTarget();
    try {
      const name = fc.string({
        unit: fc.constantFrom(...TOKEN_CHARS),
        minLength: 1,
        maxLength: 12,
      });
      const value = fc.oneof(
        fc.string({ unit: fc.constantFrom(...VALUE_CHARS), maxLength: 40 }),
        fc.string({ unit: "binary", maxLength: 12 }),
        fc.constantFrom(VALUE_CHARS.join("").trim(), "a\tb c", "", "virtual.example"),
      );
      const known = fc.constantFrom(
        "Host",
        "host",
        "User-Agent",
        "user-agent",
        "Accept",
        "Authorization",
        "Content-Type",
        "Expect",
        "Cookie",
        "Date",
      );
      const headers = fc.dictionary(fc.oneof(name, known), value, {
        minKeys: 1,
        maxKeys: 4,
      });
      // A body changes how node:http writes the request (head and body in one write).
      const body = fc.constantFrom(null, "plain text body \u00e9", { a: [1, "\u00e9"] });
      let sent = 0;
      await fc.assert(
        fc.asyncProperty(headers, body, async (headers, body) => {
          const method = body === null ? "GET" : "POST";
          const res = await api.post(`/api/v1/projects/${p}/probes`, {
            url: target.url,
            method,
            headers,
            body,
          });
          if (res.status === 422) {
            // Refused: each complaint names a header.
            for (const d of res.body.error.details) assert.match(d.path, /^headers(\.|$)/);
            return;
          }
          assert.ok(res.status === 201 || res.status === 200, `status ${res.status}`);
          const stored =
            (await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`)).body.data;
          assert.deepEqual(stored.headers, { ...headers });
          const seen = target.requests.length;
          const run = await executeProbe(stored, {
            policy: loopbackAllowed,
            timeoutMs: 5_000,
            sleep: () => Promise.resolve(),
          });
          assert.equal(run.outcome, "up", `${run.error} for ${JSON.stringify(headers)}`);
          const request = target.requests[seen];
          for (const [n, v] of Object.entries(headers)) {
            // Every accepted character is ASCII: one byte each on the wire.
            assert.ok(request.includes(`\r\n${n}: ${v}\r\n`), `${n}: ${JSON.stringify(v)}`);
          }
          sent++;
        }),
        { numRuns: 80 },
      );
      assert.ok(sent > 20, `only ${sent} of the generated header sets were accepted`);
    } finally {
      target.close();
    }
  });
  test("a run's error is a summary: a redirect to another scheme does not repeat the scheme", async ({ api }) => {
    const p = await project(api);
    const target = await startTarget();
    try {
      // The target chooses the scheme, and can spell with it what the probe sent (base64).
      const secret = "c2VjcmV0LXRva2Vu";
      const res = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `${target.origin}/redirect-to?url=${secret}:x`,
        headers: { Authorization: `Basic ${secret}` },
      });
      const stored = (await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`))
        .body.data;
      const run = await executeProbe(stored, {
        policy: loopbackAllowed,
        timeoutMs: 5_000,
        sleep: () => Promise.resolve(),
      });
      assert.equal(run.outcome, "down");
      assert.equal(run.error, "redirect to an unsupported scheme");
    } finally {
      await target.close();
    }
  });
});
