import assert from "node:assert/strict";
import fc from "fast-check";
import { createNetworkPolicy, parseNetworks } from "../base/outbound/network_policy.ts";
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
  ["a NUL in the label", { label: "a\u0000b" }, "label"],
  ["a lone surrogate in the label", { label: "x\ud800" }, "label"],
  [
    "a lone surrogate in an expected body string",
    { expect: { body: { contains: ["ok", "\udc00"] } } },
    "expect.body.contains.1",
  ],
  [
    "a NUL in a JSON assertion's value",
    { expect: { json: [{ path: "/a", op: "eq", value: "a\u0000" }] } },
    "expect.json.0.value",
  ],
  [
    "a lone surrogate in a JSON pointer",
    { expect: { json: [{ path: "/\ud800", op: "exists" }] } },
    "expect.json.0.path",
  ],
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
        label: null,
        expect: null,
        interval_seconds: null,
        timeout_ms: null,
        effective_interval_seconds: 60,
        effective_timeout_ms: 10_000,
        locations: null,
        effective_locations: ["local"],
        location_states: [],
        state: "unknown",
        state_since: null,
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
  });

  test("a project name no project can have is answered as a missing one, never 422", async ({ api }) => {
    // The document gives the path parameter the name rules of POST /projects; a name that breaks
    // them names nothing, so it gets the interface's answer for a missing project (404).
    const calls = (name: string): [string, string, unknown?][] => [
      ["POST", `/api/v1/projects/${name}/probes`, { url: "http://a.test/" }],
      ["GET", `/api/v1/projects/${name}`],
      ["GET", `/api/v1/projects/${name}/probes`],
      ["GET", `/api/v1/projects/${name}/probes/0123456789abcdef`],
      ["PATCH", `/api/v1/projects/${name}`, { label: "x" }],
      ["DELETE", `/api/v1/projects/${name}`],
      ["GET", `/api/v1/projects/${name}/alerts`],
      ["GET", `/api/v1/projects/${name}/badges`],
      ["GET", `/api/v1/projects/${name}/status-page`],
      ["GET", `/api/v1/notification-targets/${name}`],
    ];
    const missing = await Promise.all(
      calls(uniqueName()).map(([method, path, body]) => api.call(method, path, { body })),
    );
    assert.ok(missing.filter((res) => res.status === 404).length >= 8, "most answer 404");
    for (const name of ["-bad-", "x".repeat(65), "a%20b", "%C3%A9"]) {
      const answers = calls(name);
      for (const [i, [method, path, body]] of answers.entries()) {
        const res = await api.call(method, path, { body });
        assert.equal(res.status, missing[i].status, `${method} ${path}`);
        assert.deepEqual(res.body, missing[i].body, `${method} ${path}`);
      }
    }
    const trpc = await api.get(
      `/trpc/projects.get?input=${encodeURIComponent(JSON.stringify({ project: "-bad-" }))}`,
    );
    assert.equal(trpc.status, 404);
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

  test("header names are capped at 128 characters, refused with a short path", async ({ api }) => {
    const p = await project(api);
    const longest = "X".repeat(128);
    const ok = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "http://names.test/",
      headers: { [longest]: "v" },
    });
    assert.equal(ok.status, 201);
    for (const name of ["X".repeat(129), "X".repeat(200_000)]) {
      const body = { url: "http://long-name.test/", headers: { [name]: "v" } };
      const answers = [
        await api.post(`/api/v1/projects/${p}/probes`, body),
        await api.post("/api/v1/probes", { project: p, ...body }),
        await api.patch(`/api/v1/projects/${p}/probes/${ok.body.data.probe_id}`, {
          headers: { [name]: "v" },
        }),
      ];
      const trpc = await api.post("/trpc/probes.create", { project: p, ...body });
      assert.equal(trpc.status, 422);
      answers.push({ ...trpc, body: trpc.body.error.data });
      for (const res of answers) {
        assert.equal(res.status, 422, name.length.toString());
        assert.equal(res.body.error.code, "validation_failed");
        // The path names the field, cut to 64 characters: the name is not sent back in full.
        assert.deepEqual(res.body.error.details, [{
          path: `headers.${"X".repeat(64)}…`,
          message: "header names must be HTTP tokens (RFC 9110) of at most 128 characters",
        }]);
        assert.ok(res.text.length < 1000, `${res.text.length} bytes`);
      }
    }
    const list = (await api.get(`/api/v1/projects/${p}/probes`)).body;
    assert.deepEqual(list.data.map((probe: { url: string }) => probe.url), ["http://names.test/"]);
    assert.deepEqual(list.data[0].headers, { [longest]: "v" });
  });

  test("more than fifty headers answer 422 naming headers", async ({ api }) => {
    const p = await project(api);
    const headers = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`h${i}`, "v"]));
    const res = await api.post(`/api/v1/projects/${p}/probes`, { url: "http://h.test/", headers });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.error.details, [
      { path: "headers", message: "at most 50 headers are allowed" },
    ]);
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
      label: null,
      expect: null,
      interval_seconds: null,
      timeout_ms: null,
      effective_interval_seconds: 60,
      effective_timeout_ms: 10_000,
      locations: null,
      effective_locations: ["local"],
      location_states: [],
      state: "unknown",
      state_since: null,
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
        "effective_interval_seconds",
        "effective_locations",
        "effective_timeout_ms",
        "expect",
        "headers",
        "interval_seconds",
        "label",
        "latency",
        "location_states",
        "locations",
        "method",
        "probe_id",
        "project",
        "state",
        "state_since",
        "timeout_ms",
        "url",
      ]);
    }
    for (const probe of all.data.filter((x: { project: string }) => [a, b].includes(x.project))) {
      assert.deepEqual([probe.state, probe.state_since], ["unknown", null], "never run");
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
      label: null,
      expect: null,
      interval_seconds: null,
      timeout_ms: null,
      effective_interval_seconds: 60,
      effective_timeout_ms: 10_000,
      locations: null,
      effective_locations: ["local"],
      location_states: [],
      state: "unknown",
      state_since: null,
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

  // --- label and expect -----------------------------------------------------------------------

  const EXPECT = {
    status: ["2xx", 301],
    body: { contains: ["ok"], not_contains: ["error"] },
    json: [
      { path: "/status", op: "eq", value: "UP" },
      { path: "/a~1b/~0c", op: "exists" },
      { path: "/n", op: "le", value: 1.5 },
      { path: "/tags", op: "contains", value: null },
    ],
    headers: [{ name: "Content-Type", op: "contains", value: "json" }],
    certificate_days: 14,
  };

  test("label and expect are stored and read back as sent, from both create forms", async ({ api }) => {
    const p = await project(api);
    const a = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://shop.test/health",
      label: "Shop \u{1F6D2} health",
      expect: EXPECT,
    });
    assert.equal(a.status, 201);
    const b = await api.post("/api/v1/probes", {
      project: p,
      url: "http://api.test/",
      label: "API",
      expect: {},
    });
    assert.equal(b.status, 201);
    const got = (await api.get(`/api/v1/projects/${p}/probes/${a.body.data.probe_id}`)).body.data;
    assert.equal(got.label, "Shop \u{1F6D2} health");
    assert.deepEqual(got.expect, EXPECT);
    const list = (await api.get(`/api/v1/projects/${p}/probes`)).body.data;
    assert.deepEqual(list.map((x: { label: string }) => x.label), ["API", "Shop \u{1F6D2} health"]);
    assert.deepEqual(list[0].expect, {});
    assert.deepEqual(list[1].expect, EXPECT);
    // The same over /trpc.
    const trpc = await api.get(
      `/trpc/probes.get?input=${
        encodeURIComponent(JSON.stringify({ project: p, probeId: a.body.data.probe_id }))
      }`,
    );
    assert.deepEqual(trpc.body.result.data.data.expect, EXPECT);
  });

  test("a rewrite clears label and expect not sent; a PATCH keeps them, null clears, ids stay", async ({ api }) => {
    const p = await project(api);
    const url = "https://keep.test/";
    const created = await api.post(`/api/v1/projects/${p}/probes`, {
      url,
      label: "first",
      expect: EXPECT,
    });
    const id = created.body.data.probe_id;
    const read = async () =>
      (await api.get(`/api/v1/projects/${p}/probes/${id}`)).body.data as Record<string, unknown>;

    const patched = await api.patch(`/api/v1/projects/${p}/probes/${id}`, { latency: 40 });
    assert.equal(patched.status, 200);
    assert.equal((await read()).label, "first");
    assert.deepEqual((await read()).expect, EXPECT);

    const changed = await api.patch(`/api/v1/projects/${p}/probes/${id}`, {
      label: "second",
      expect: { status: [204] },
    });
    assert.deepEqual(changed.body.data, { project: p, url, probe_id: id }, "expect keeps the id");
    assert.deepEqual({ ...(await read()), latency: 0 }, {
      project: p,
      probe_id: id,
      url,
      method: "GET",
      headers: {},
      body: null,
      latency: 0,
      label: "second",
      expect: { status: [204] },
      interval_seconds: null,
      timeout_ms: null,
      effective_interval_seconds: 60,
      effective_timeout_ms: 10_000,
      locations: null,
      effective_locations: ["local"],
      location_states: [],
      state: "unknown",
      state_since: null,
    });

    const cleared = await api.patch(`/api/v1/projects/${p}/probes/${id}`, {
      label: null,
      expect: null,
    });
    assert.equal(cleared.body.data.probe_id, id);
    assert.equal((await read()).label, null);
    assert.equal((await read()).expect, null);

    await api.patch(`/api/v1/projects/${p}/probes/${id}`, { label: "again", expect: EXPECT });
    const rewritten = await api.post(`/api/v1/projects/${p}/probes`, { url });
    assert.equal(rewritten.status, 200);
    assert.equal(rewritten.body.data.probe_id, id);
    assert.equal((await read()).label, null, "a rewrite takes the default");
    assert.equal((await read()).expect, null);
    const withBoth = await api.post(`/api/v1/projects/${p}/probes`, {
      url,
      label: "third",
      expect: { headers: [{ name: "x", op: "exists" }] },
    });
    assert.equal(withBoth.body.data.probe_id, id);
    assert.equal((await read()).label, "third");
    assert.deepEqual((await read()).expect, { headers: [{ name: "x", op: "exists" }] });
  });

  test("bad labels and assertions answer 422 naming the place, on create and PATCH, and change nothing", async ({ api }) => {
    const p = await project(api);
    const url = "https://strict-expect.test/";
    const existing = await api.post(`/api/v1/projects/${p}/probes`, {
      url,
      label: "kept",
      expect: { status: [200] },
    });
    const id = existing.body.data.probe_id;
    const before = (await api.get(`/api/v1/projects/${p}/probes`)).body;
    const json = (item: Record<string, unknown>) => ({ expect: { json: [item] } });
    const cases: [Record<string, unknown>, string][] = [
      [{ label: "" }, "label"],
      [{ label: "x".repeat(201) }, "label"],
      [{ label: 5 }, "label"],
      [{ expect: "2xx" }, "expect"],
      [{ expect: [] }, "expect"],
      [{ expect: { unknown: 1 } }, "expect.unknown"],
      [{ expect: { status: [] } }, "expect.status"],
      [{ expect: { status: "2xx" } }, "expect.status"],
      [{ expect: { status: [200, 200] } }, "expect.status.1"],
      [{ expect: { status: ["2xx", "2xx"] } }, "expect.status.1"],
      [{ expect: { status: [99] } }, "expect.status.0"],
      [{ expect: { status: [200, 600] } }, "expect.status.1"],
      [{ expect: { status: ["2XX"] } }, "expect.status.0"],
      [{ expect: { status: ["6xx"] } }, "expect.status.0"],
      [{ expect: { status: [200.5] } }, "expect.status.0"],
      [{ expect: { body: { contains: [""] } } }, "expect.body.contains.0"],
      [{ expect: { body: { not_contains: ["x".repeat(1025)] } } }, "expect.body.not_contains.0"],
      [{ expect: { body: { matches: ["x"] } } }, "expect.body.matches"],
      [{ expect: { body: { contains: "x" } } }, "expect.body.contains"],
      [json({ path: "/a", op: "like", value: 1 }), "expect.json.0.op"],
      [json({ path: "a", op: "exists" }), "expect.json.0.path"],
      [json({ path: "/a~2", op: "exists" }), "expect.json.0.path"],
      [json({ path: "/a~", op: "exists" }), "expect.json.0.path"],
      [json({ path: `/${"x".repeat(512)}`, op: "exists" }), "expect.json.0.path"],
      [json({ path: "/a", op: "exists", value: 1 }), "expect.json.0.value"],
      [json({ path: "/a", op: "not_exists", value: null }), "expect.json.0.value"],
      [json({ path: "/a", op: "eq" }), "expect.json.0.value"],
      [json({ path: "/a", op: "contains" }), "expect.json.0.value"],
      [json({ path: "/a", op: "gt", value: "5" }), "expect.json.0.value"],
      [json({ path: "/a", op: "le", value: null }), "expect.json.0.value"],
      [json({ path: "/a", op: "eq", value: { b: 1 } }), "expect.json.0.value"],
      [json({ path: "/a", op: "eq", value: [1] }), "expect.json.0.value"],
      [json({ path: "/a", op: "eq", value: "x".repeat(1025) }), "expect.json.0.value"],
      [json({ path: "/a", op: "eq", value: 1, extra: true }), "expect.json.0.extra"],
      [json({ op: "exists" }), "expect.json.0.path"],
      [{ expect: { headers: [{ name: "bad name", op: "exists" }] } }, "expect.headers.0.name"],
      [{ expect: { headers: [{ name: "x".repeat(129), op: "exists" }] } }, "expect.headers.0.name"],
      [{ expect: { headers: [{ name: "x", op: "ne", value: "a" }] } }, "expect.headers.0.op"],
      [{ expect: { headers: [{ name: "x", op: "eq", value: 1 }] } }, "expect.headers.0.value"],
      [{ expect: { headers: [{ name: "x", op: "eq" }] } }, "expect.headers.0.value"],
      [{ expect: { headers: [{ name: "x", op: "exists", value: "" }] } }, "expect.headers.0.value"],
      [{ expect: { certificate_days: 0 } }, "expect.certificate_days"],
      [{ expect: { certificate_days: 3651 } }, "expect.certificate_days"],
      [{ expect: { certificate_days: 1.5 } }, "expect.certificate_days"],
      [{ expect: { certificate_days: "30" } }, "expect.certificate_days"],
      [{
        expect: {
          body: { contains: Array.from({ length: 11 }, (_, i) => `s${i}`) },
          json: Array.from({ length: 10 }, (_, i) => ({ path: `/${i}`, op: "exists" })),
        },
      }, "expect"],
      [{
        expect: {
          status: [200],
          headers: Array.from({ length: 19 }, (_, i) => ({ name: `h${i}`, op: "exists" })),
          certificate_days: 1,
        },
      }, "expect"],
    ];
    for (const [fields, path] of cases) {
      const writes: [string, () => ReturnType<TestClient["post"]>][] = [
        ["create", () => api.post(`/api/v1/projects/${p}/probes`, { url, ...fields })],
        [
          "create (new)",
          () => api.post(`/api/v1/projects/${p}/probes`, { url: "https://n.test/", ...fields }),
        ],
        ["PATCH", () => api.patch(`/api/v1/projects/${p}/probes/${id}`, fields)],
      ];
      for (const [where, write] of writes) {
        const res = await write();
        const what = `${where} ${JSON.stringify(fields).slice(0, 100)}`;
        assert.equal(res.status, 422, what);
        assert.ok(
          res.body.error.details.some((d: { path: string }) => d.path === path),
          `${what}: ${JSON.stringify(res.body.error.details)}`,
        );
      }
    }
    assert.deepEqual((await api.get(`/api/v1/projects/${p}/probes`)).body, before);
    // Twenty assertions in all are allowed.
    const twenty = {
      status: [200],
      body: { contains: ["a"], not_contains: ["b"] },
      json: Array.from({ length: 8 }, (_, i) => ({ path: `/${i}`, op: "exists" })),
      headers: Array.from({ length: 8 }, (_, i) => ({ name: `h${i}`, op: "exists" })),
      certificate_days: 3650,
    };
    const ok = await api.patch(`/api/v1/projects/${p}/probes/${id}`, { expect: twenty });
    assert.equal(ok.status, 200);
    assert.deepEqual(
      (await api.get(`/api/v1/projects/${p}/probes/${id}`)).body.data.expect,
      twenty,
    );
  });

  test("certificate_days needs an https URL: on create, and on PATCH against the stored URL", async ({ api }) => {
    const p = await project(api);
    const details = [{
      path: "expect.certificate_days",
      message: "certificate_days needs an https URL",
    }];
    const cert = { certificate_days: 30 };
    for (
      const res of [
        await api.post(`/api/v1/projects/${p}/probes`, { url: "http://plain.test/", expect: cert }),
        await api.post("/api/v1/probes", { project: p, url: "http://plain.test/", expect: cert }),
      ]
    ) {
      assert.equal(res.status, 422);
      assert.deepEqual(res.body.error.details, details);
    }
    const secure = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://secure.test/",
      expect: cert,
    });
    assert.equal(secure.status, 201);
    const plain = await api.post(`/api/v1/projects/${p}/probes`, { url: "http://plain.test/" });
    const before = (await api.get(`/api/v1/projects/${p}/probes`)).body;

    // Only the URL changes, to http, while the stored expect checks a certificate.
    const toHttp = await api.patch(`/api/v1/projects/${p}/probes/${secure.body.data.probe_id}`, {
      url: "http://secure.test/",
    });
    assert.equal(toHttp.status, 422);
    assert.deepEqual(toHttp.body.error.details, details);
    // Only expect changes, on a probe whose stored URL is http.
    const onHttp = await api.patch(`/api/v1/projects/${p}/probes/${plain.body.data.probe_id}`, {
      expect: cert,
    });
    assert.equal(onHttp.status, 422);
    assert.deepEqual(onHttp.body.error.details, details);
    // The same over /trpc: the domain's answer in tRPC's shape.
    const trpc = await api.post("/trpc/probes.update", {
      project: p,
      probeId: plain.body.data.probe_id,
      expect: cert,
    });
    assert.equal(trpc.status, 422);
    assert.deepEqual(trpc.body.error.data.error.details, details);
    assert.deepEqual((await api.get(`/api/v1/projects/${p}/probes`)).body, before);

    // Both together are fine when the certificate check goes.
    const both = await api.patch(`/api/v1/projects/${p}/probes/${secure.body.data.probe_id}`, {
      url: "http://secure.test/",
      expect: { status: [200] },
    });
    assert.equal(both.status, 200);
    const back = await api.patch(`/api/v1/projects/${p}/probes/${plain.body.data.probe_id}`, {
      url: "https://plain.test/",
      expect: cert,
    });
    assert.equal(back.status, 200);
  });

  test("the project archive keeps each probe's label and expect", async ({ api, app }) => {
    const p = await project(api);
    await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://archived.test/",
      label: "archived",
      expect: EXPECT,
    });
    await api.post(`/api/v1/projects/${p}/probes`, { url: "https://plain-archived.test/" });
    assert.equal((await api.delete(`/api/v1/projects/${p}`)).status, 200);
    const [{ snapshot }] = await app.database.db.selectFrom("archived_projects")
      .select("snapshot").where("project", "=", p).execute();
    const probes = (snapshot as { probes: Record<string, unknown>[] }).probes;
    assert.deepEqual(probes.map((x) => [x.label, x.expect]), [
      ["archived", EXPECT],
      [null, null],
    ]);
  });

  test("a stored probe with expect runs as read: its assertions judge the run", async ({ api }) => {
    const p = await project(api);
    const target = await startTarget();
    try {
      const res = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `${target.origin}/status/404`,
        expect: { status: [404], body: { contains: ["status"] } },
      });
      const stored = (await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`))
        .body.data;
      const options = { policy: loopbackAllowed, timeoutMs: 5_000 };
      const run = await executeProbe(stored, options);
      assert.equal(run.outcome, "up");
      assert.deepEqual(run.failedChecks, []);
      await api.patch(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`, {
        expect: { json: [{ path: "/a", op: "exists" }] },
      });
      const changed = (await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`))
        .body.data;
      const failing = await executeProbe(changed, options);
      assert.equal(failing.outcome, "down");
      assert.deepEqual(failing.failedChecks, [
        { check: "status", expected: "below 400", seen: "404" },
        { check: "json.0", expected: "/a exists", seen: "body is not JSON" },
      ]);
      assert.equal(failing.error, "HTTP 404; assertion failed: json.0");
    } finally {
      await target.close();
    }
  });

  test("a probe is up since its real run; label, expect and latency keep that, a new URL or method makes it unknown", async ({ api }) => {
    const p = await project(api);
    const target = await startTarget();
    try {
      const created = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `${target.origin}/ok`,
      });
      let id: string = created.body.data.probe_id;
      const read = async () => (await api.get(`/api/v1/projects/${p}/probes/${id}`)).body.data;
      const runNow = async () => {
        const res = await api.post(`/api/v1/projects/${p}/probes/${id}/run`);
        assert.equal(res.status, 200, res.text);
        return res.body.data;
      };
      const stateOf = async () => {
        const probe = await read();
        return [probe.state, probe.state_since];
      };
      /** `state_since` of a reset is the time of the change that made it. */
      const between = (since: string, from: number, to: number) => {
        const at = Date.parse(since);
        assert.ok(at >= from && at <= to, `${since} is not within the change`);
      };

      const run = await runNow();
      assert.equal(run.outcome, "up");
      assert.deepEqual(await stateOf(), ["up", run.started_at]);
      const listed = (await api.get(`/api/v1/projects/${p}/probes`)).body.data;
      assert.deepEqual([listed[0].state, listed[0].state_since], ["up", run.started_at]);

      const kept = await api.patch(`/api/v1/projects/${p}/probes/${id}`, {
        label: "ok",
        expect: { status: [200] },
        latency: 60_000,
      });
      assert.equal(kept.body.data.probe_id, id);
      assert.deepEqual(await stateOf(), ["up", run.started_at], "a PATCH of other fields");
      const same = await api.post(`/api/v1/projects/${p}/probes`, { url: `${target.origin}/ok` });
      assert.equal(same.body.data.probe_id, id);
      assert.deepEqual(await stateOf(), ["up", run.started_at], "a rewrite, same method");

      let from = Date.now();
      const rewrite = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `${target.origin}/ok`,
        method: "POST",
      });
      let to = Date.now();
      assert.notEqual(rewrite.body.data.probe_id, id);
      id = rewrite.body.data.probe_id;
      const [afterRewrite, sinceRewrite] = await stateOf();
      assert.equal(afterRewrite, "unknown", "a rewrite with another method");
      between(sinceRewrite, from, to);

      const again = await runNow();
      assert.deepEqual(await stateOf(), ["up", again.started_at]);
      from = Date.now();
      const moved = await api.patch(`/api/v1/projects/${p}/probes/${id}`, {
        url: `${target.origin}/ok?moved`,
      });
      to = Date.now();
      assert.notEqual(moved.body.data.probe_id, id);
      id = moved.body.data.probe_id;
      const [afterMove, sinceMove] = await stateOf();
      assert.equal(afterMove, "unknown", "a PATCH of the URL");
      between(sinceMove, from, to);
    } finally {
      await target.close();
    }
  });
});
