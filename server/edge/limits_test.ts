import assert from "node:assert/strict";
import { createApp } from "../app.ts";
import { systemClock } from "../base/clock.ts";
import { MAX_JSON_ARRAY, MAX_JSON_DEPTH } from "./body.ts";
import { createLogger } from "../base/log.ts";
import {
  apiSuite,
  backends,
  freshDatabase,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../testing/app.ts";

/** A value nested `depth` levels deep: `{ d: { d: ... 1 } }` counts one level per object. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { d: value };
  return value;
}

apiSuite("request limits", (test) => {
  test("JSON nested 32 levels passes and 33 answers 422 before any work", async ({ api }) => {
    const p = uniqueName();
    await api.post("/api/v1/projects", { project: p });
    // The request object itself is the first level, the probe body's nesting the rest.
    const ok = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://a.example.com/",
      body: nested(MAX_JSON_DEPTH - 1),
    });
    assert.equal(ok.status, 201);
    const deep = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://b.example.com/",
      body: nested(MAX_JSON_DEPTH),
    });
    assert.equal(deep.status, 422);
    assert.match(deep.body.error.details[0].message, /nested deeper than 32/);
    const list = await api.get(`/api/v1/projects/${p}/probes`);
    assert.deepEqual(list.body.data.map((probe: { url: string }) => probe.url), [
      "https://a.example.com/",
    ]);
  });

  test("arrays of 1000 items pass and of 1001 answer 422", async ({ api }) => {
    const p = uniqueName();
    await api.post("/api/v1/projects", { project: p });
    const ok = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://a.example.com/",
      body: Array(MAX_JSON_ARRAY).fill(0),
    });
    assert.equal(ok.status, 201);
    const long = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://a.example.com/",
      body: [[Array(MAX_JSON_ARRAY + 1).fill("x")]],
    });
    assert.equal(long.status, 422);
    assert.match(long.body.error.details[0].message, /more than 1000 items/);
    const probe = await api.get(`/api/v1/projects/${p}/probes`);
    assert.equal(probe.body.data[0].body.length, MAX_JSON_ARRAY, "the 422 changed nothing");
  });

  test("the same limits hold on /trpc, for bodies and for the input parameter", async ({ api }) => {
    const p = uniqueName();
    const deepBody = await api.post("/trpc/projects.create", {
      project: p,
      label: nested(MAX_JSON_DEPTH),
    });
    assert.equal(deepBody.status, 422);
    assert.equal(deepBody.body.error.data.error.code, "validation_failed");
    const longInput = encodeURIComponent(JSON.stringify({ project: Array(1001).fill("a") }));
    const got = await api.get(`/trpc/projects.list?input=${longInput}`);
    assert.equal(got.status, 422);
    assert.equal(got.body.error.data.code, "UNPROCESSABLE_CONTENT");
    assert.equal((await api.get(`/api/v1/projects/${p}`)).status, 404);
  });

  test("a repeated JSON key answers 422 naming it, on REST and /trpc, and stores nothing", async ({ api }) => {
    const p = uniqueName();
    await api.post("/api/v1/projects", { project: p });
    const json = { "content-type": "application/json" };
    const cases: [string, string, string][] = [
      // [body, the path named, the key named]
      ['{"url":"http://a.test/","url":"http://b.test/"}', "url", "url"],
      ['{"url":"http://a.test/","headers":{"X-A":"1","X-A":"2"}}', "headers.X-A", "X-A"],
      ['{"url":"http://a.test/","body":{"k":[1,{"n":1,"n":2}]}}', "body.k.1.n", "n"],
      // Keys compare as decoded: `\u0061` is `a`.
      ['{"url":"http://a.test/","body":{"a":1,"\\u0061":2}}', "body.a", "a"],
      ['{"url":"http://a.test/","label":"x","label":"y"}', "label", "label"],
    ];
    for (const [raw, path, key] of cases) {
      const rest = await api.call("POST", `/api/v1/projects/${p}/probes`, { raw, headers: json });
      assert.equal(rest.status, 422, raw);
      assert.deepEqual(rest.body, {
        error: {
          code: "validation_failed",
          message: "Validation failed",
          details: [{
            path,
            message: `the key "${key}" appears more than once in this object: send each key once`,
          }],
        },
      });
      const trpcRaw = raw.replace("{", `{"project":"${p}",`);
      const trpc = await api.call("POST", "/trpc/probes.create", { raw: trpcRaw, headers: json });
      assert.equal(trpc.status, 422, trpcRaw);
      assert.deepEqual(trpc.body.error.data.error, rest.body.error);
    }
    const input = encodeURIComponent(`{"project":"${p}","project":"other"}`);
    const query = await api.get(`/trpc/projects.get?input=${input}`);
    assert.equal(query.status, 422);
    assert.equal(query.body.error.data.error.details[0].path, "project");
    // The same key in two objects, and the same text as a value, are not repeats.
    const fine = await api.call("POST", `/api/v1/projects/${p}/probes`, {
      raw: '{"url":"http://a.test/","label":"url","body":[{"url":1},{"url":2,"x":{"url":3}}]}',
      headers: json,
    });
    assert.equal(fine.status, 201, fine.text);
    const list = (await api.get(`/api/v1/projects/${p}/probes`)).body;
    assert.equal(list.meta.count, 1, "the 422s stored nothing");
  });

  test("a NUL in a name or a filter answers 4xx, not 500", async ({ api }) => {
    // PostgreSQL text cannot hold NUL: a name with one names nothing that exists.
    const input = encodeURIComponent(JSON.stringify({ project: "a\0b" }));
    const invalid = [
      await api.get("/api/v1/probes?project=a%00b"),
      await api.get("/api/v1/projects?project=%00"),
      await api.get(`/trpc/projects.get?input=${input}`),
      await api.post("/trpc/probes.delete", { project: "a", probeId: "\0" }),
    ];
    for (const res of invalid) {
      assert.equal(res.status, 422, res.text);
      const error = res.body.error.data?.error ?? res.body.error;
      assert.equal(error.code, "validation_failed");
    }
    // Path segments reach the procedures as sent, still encoded, and so name nothing.
    assert.equal((await api.get("/api/v1/projects/a%00b")).status, 404);
    assert.equal((await api.delete("/api/v1/projects/a/probes/x%00")).status, 404);
  });

  test("errors and empty answers carry nosniff and no-store too", async ({ api }) => {
    const p = uniqueName();
    await api.post("/api/v1/projects", { project: p });
    const created = await api.post(`/api/v1/projects/${p}/probes`, { url: "https://a.test/" });
    const answers = [
      await api.post("/api/v1/projects", { project: p }), // 409
      await api.post("/api/v1/projects", { project: 5 }), // 422
      await api.delete(`/api/v1/projects/${p}/probes/${created.body.data.probe_id}`), // 204
      await api.get("/trpc/projects.get?input=%7B%7D"), // tRPC 422
    ];
    assert.deepEqual(answers.map((a) => a.status), [409, 422, 204, 422]);
    for (const a of answers) {
      assert.equal(a.headers.get("x-content-type-options"), "nosniff");
      assert.equal(a.headers.get("cache-control"), "no-store");
    }
  });
});

async function appWith(
  backend: "pglite" | "postgres",
  options: { rateLimitPerSecond?: number; corsOrigins?: string[]; now?: () => number },
) {
  const { now, ...config } = options;
  const app = await createApp({
    database: await freshDatabase(backend),
    apiKeys: [TEST_API_KEY, "second-key-0123"],
    log: createLogger("silent"),
    config,
    clock: now ? { ...systemClock, now } : undefined,
  });
  return { app, api: new TestClient(app.handler) };
}

for (const backend of backends()) {
  Deno.test(`over the rate limit a key gets 429 with Retry-After [${backend}]`, async () => {
    let ms = 0;
    const { app, api } = await appWith(backend, { rateLimitPerSecond: 5, now: () => ms });
    try {
      const statuses = [];
      for (let i = 0; i < 12; i++) statuses.push((await api.get("/api/v1/projects")).status);
      assert.deepEqual(statuses, [...Array(10).fill(200), 429, 429], "a burst of twice the rate");
      const limited = await api.get("/api/v1/projects");
      assert.equal(limited.headers.get("retry-after"), "1");
      assert.equal(limited.headers.get("x-content-type-options"), "nosniff");
      assert.deepEqual(limited.body, {
        error: { code: "rate_limited", message: "Too many requests" },
      });
      const trpc = await api.get("/trpc/projects.list?input=%7B%7D");
      assert.equal(trpc.status, 429);
      assert.equal(trpc.body.error.data.error.code, "rate_limited");
      // A limited write is not carried out.
      const name = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project: name })).status, 429);

      // Another key has its own bucket; health checks are never limited.
      assert.equal((await api.get("/api/v1/projects", { key: "second-key-0123" })).status, 200);
      assert.equal((await api.get("/healthz", { key: null })).status, 200);
      // Unauthenticated requests answer 401, not 429, and use no one's tokens.
      assert.equal((await api.get("/api/v1/projects", { key: "wrong-key-000" })).status, 401);

      ms += 1000; // five tokens back
      const after = [];
      for (let i = 0; i < 6; i++) after.push((await api.get("/api/v1/projects")).status);
      assert.deepEqual(after, [200, 200, 200, 200, 200, 429]);
      assert.equal(
        (await api.get(`/api/v1/projects/${name}`, { key: "second-key-0123" })).status,
        404,
      );
    } finally {
      await app.close();
    }
  });

  Deno.test(`a rate limit of 0 never answers 429 [${backend}]`, async () => {
    const { app, api } = await appWith(backend, { rateLimitPerSecond: 0, now: () => 0 });
    try {
      for (let i = 0; i < 50; i++) assert.equal((await api.get("/api/v1/projects")).status, 200);
    } finally {
      await app.close();
    }
  });

  Deno.test(`CORS headers go only to the origins listed [${backend}]`, async () => {
    const origin = "https://console.example.com";
    const { app, api } = await appWith(backend, { corsOrigins: [origin] });
    try {
      const allowed = await api.get("/api/v1/projects", { headers: { origin } });
      assert.equal(allowed.status, 200);
      assert.equal(allowed.headers.get("access-control-allow-origin"), origin);
      assert.equal(allowed.headers.get("vary"), "Origin");
      const other = await api.get("/api/v1/projects", {
        headers: { origin: "https://evil.example.com" },
      });
      assert.equal(other.status, 200);
      assert.equal(other.headers.get("access-control-allow-origin"), null);

      // A preflight carries no key; it is answered before the key check.
      const preflight = await api.call("OPTIONS", "/api/v1/projects", {
        key: null,
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type, x-service-api-key",
        },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get("access-control-allow-origin"), origin);
      assert.match(preflight.headers.get("access-control-allow-headers")!, /x-service-api-key/);
      assert.match(preflight.headers.get("access-control-allow-methods")!, /PATCH/);
      const foreign = await api.call("OPTIONS", "/api/v1/projects", {
        key: null,
        headers: { origin: "https://evil.example.com", "access-control-request-method": "POST" },
      });
      assert.notEqual(foreign.status, 204);
      assert.equal(foreign.headers.get("access-control-allow-origin"), null);
    } finally {
      await app.close();
    }
  });

  Deno.test(`with no CORS_ORIGINS no answer carries a CORS header [${backend}]`, async () => {
    const { app, api } = await appWith(backend, {});
    try {
      const origin = "https://console.example.com";
      const answers = [
        await api.get("/api/v1/projects", { headers: { origin } }),
        await api.call("OPTIONS", "/api/v1/projects", {
          key: null,
          headers: { origin, "access-control-request-method": "GET" },
        }),
      ];
      for (const a of answers) {
        for (const name of a.headers.keys()) assert.ok(!name.startsWith("access-control-"), name);
        assert.equal(a.headers.get("vary"), null);
      }
    } finally {
      await app.close();
    }
  });
}
