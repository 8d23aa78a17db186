import assert from "node:assert/strict";
import { type AppOptions, createApp } from "../app.ts";
import { systemClock } from "../base/clock.ts";
import { createLogger } from "../base/log.ts";
import { apiSuite, freshDatabase, TEST_API_KEY, TestClient, uniqueName } from "../testing/app.ts";
import { MAX_TRPC_BATCH } from "./handler.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** An app with these settings whose clock stands at 0. */
async function appWith(config: AppOptions["config"]) {
  const lines: Json[] = [];
  const app = await createApp({
    database: await freshDatabase("pglite"),
    apiKeys: [TEST_API_KEY],
    log: createLogger("info", (line) => lines.push(JSON.parse(line))),
    config,
    clock: { ...systemClock, now: () => 0 },
  });
  return { app, lines };
}

const from = (address: string, key: string | null = null, headers: Record<string, string> = {}) =>
  [
    new Request("http://service.test/api/v1/projects", {
      headers: { ...headers, ...(key && { "x-service-api-key": key }) },
    }),
    { address },
  ] as const;

Deno.test("a tRPC batch holds at most 50 calls, and each call takes a token", async () => {
  const { app } = await appWith({ rateLimitPerSecond: 30 }); // a burst of 60
  const api = new TestClient(app.handler);
  const batch = (n: number) =>
    `/trpc/${Array(n).fill("projects.list").join(",")}?batch=1&input=${
      encodeURIComponent(
        JSON.stringify(Object.fromEntries([...Array(n).keys()].map((i) => [i, {}]))),
      )
    }`;
  try {
    const over = await api.get(batch(MAX_TRPC_BATCH + 1));
    assert.equal(over.status, 400);
    assert.deepEqual(over.body.error.data.error, {
      code: "bad_request",
      message: "A batch holds at most 50 calls",
    });
    assert.equal((await api.get(batch(40))).status, 200); // 20 tokens left
    const limited = await api.get(batch(21));
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.data.error.code, "rate_limited");
    assert.equal((await api.get(batch(20))).status, 200);
    assert.equal((await api.get("/trpc/projects.list?input=%7B%7D")).status, 429);
  } finally {
    await app.close();
  }
});

Deno.test("failed key checks are limited per client address, and not logged one by one", async () => {
  const { app, lines } = await appWith({ authFailuresPerSecond: 1 }); // burst 2
  let closed = false;
  try {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await app.handler(...from("10.0.0.1"))).status);
    assert.deepEqual(statuses, [401, 401, 429, 429, 429]);
    const limited = await app.handler(...from("10.0.0.1", "wrong-key-123"));
    assert.equal(limited.headers.get("retry-after"), "1");
    assert.deepEqual(await limited.json(), {
      error: { code: "rate_limited", message: "Too many requests" },
    });
    // Another address has its own bucket; a valid key is never held back by its address.
    assert.equal((await app.handler(...from("10.0.0.2"))).status, 401);
    assert.equal((await app.handler(...from("10.0.0.1", TEST_API_KEY))).status, 200);
    const logged = lines.filter((l) => l.msg === "request").map((l) => l.status);
    assert.deepEqual(logged, [200], "requests without a valid key are not logged one by one");
    closed = true;
    await app.close();
    // They are counted in the summary line, written at the latest at shutdown.
    const [summary] = lines.filter((l) => l.msg === "requests");
    assert.deepEqual(summary.counts, [
      { route: "/api/v1/projects", method: "GET", status: 429, count: 4 },
      { route: "/api/v1/projects", method: "GET", status: 401, count: 3 },
    ]);
  } finally {
    if (!closed) await app.close();
  }
});

Deno.test("behind a trusted proxy, X-Forwarded-For names the client; elsewhere it is ignored", async () => {
  const { app } = await appWith({
    authFailuresPerSecond: 1,
    trustedProxies: ["127.0.0.1", "10.1.0.0/16"],
  });
  try {
    const via = (client: string, peer = "127.0.0.1") =>
      app.handler(...from(peer, null, { "x-forwarded-for": `6.6.6.6, ${client}, 10.1.2.3` }))
        .then((r) => r.status);
    assert.deepEqual([await via("1.2.3.4"), await via("1.2.3.4"), await via("1.2.3.4")], [
      401,
      401,
      429,
    ]);
    assert.equal(await via("5.6.7.8"), 401, "another client behind the same proxy");
    // An untrusted peer's header is not believed: the peer itself is counted.
    assert.deepEqual([await via("9.9.9.1", "8.8.8.8"), await via("9.9.9.2", "8.8.8.8")], [
      401,
      401,
    ]);
    assert.equal(await via("9.9.9.3", "8.8.8.8"), 429);
  } finally {
    await app.close();
  }
});

Deno.test("logged paths are cut at 256 characters, unknown methods logged as OTHER", async () => {
  const { app, lines } = await appWith({});
  try {
    const long = `/api/v1/${"a".repeat(60_000)}`;
    const headers = { "x-service-api-key": TEST_API_KEY };
    await app.handler(new Request(`http://service.test${long}`, { headers }));
    await app.handler(
      new Request("http://service.test/api/v1/projects", { method: "BREW", headers }),
    );
    const [first, second] = lines.filter((l) => l.msg === "request");
    assert.equal(first.path, `${long.slice(0, 256)}…`);
    assert.equal(second.method, "OTHER");
  } finally {
    await app.close();
  }
});

apiSuite("numbers a double cannot hold", (test) => {
  test("are refused with 422 naming the field, on REST and /trpc, storing nothing", async ({ api }) => {
    const project = uniqueName();
    await api.post("/api/v1/projects", { project });
    const url = "https://n.example.com/";
    const json = { "content-type": "application/json" };
    for (
      const [raw, path] of [
        [`{"url":"${url}","body":1e309}`, "body"],
        [`{"url":"${url}","body":{"n":-0}}`, "body.n"],
        [`{"url":"${url}","body":[1,123456789012345678901234567890]}`, "body.1"],
        [`{"url":"${url}","latency":1e400}`, "latency"],
      ]
    ) {
      const rest = await api.call("POST", `/api/v1/projects/${project}/probes`, {
        raw,
        headers: json,
      });
      assert.equal(rest.status, 422, raw);
      assert.equal(rest.body.error.details[0].path, path, raw);
      const trpcRaw = raw.replace("{", `{"project":"${project}",`);
      const trpc = await api.call("POST", "/trpc/probes.create", { raw: trpcRaw, headers: json });
      assert.equal(trpc.status, 422, trpcRaw);
      assert.deepEqual(trpc.body.error.data.error, rest.body.error);
    }
    assert.equal((await api.get(`/api/v1/projects/${project}/probes`)).body.meta.count, 0);
    // The same numbers written another way are kept: 100.0 and 1e2 are 100.
    const kept = await api.call("POST", `/api/v1/projects/${project}/probes`, {
      raw: `{"url":"${url}","latency":100.0,"body":{"a":1e2,"b":0.1,"c":-1.5}}`,
      headers: json,
    });
    assert.equal(kept.status, 201);
    const probe = (await api.get(`/api/v1/projects/${project}/probes`)).body.data[0];
    assert.equal(probe.latency, 100);
    assert.deepEqual(probe.body, { a: 100, b: 0.1, c: -1.5 });
  });

  test("/trpc answers oversized, invalid UTF-8 and malformed bodies in its own shape", async ({ api }) => {
    const json = { "content-type": "application/json" };
    const cases: [BodyInit, number, string][] = [
      ["x".repeat(1024 * 1024 + 1), 413, "payload_too_large"],
      [new Uint8Array([0x7b, 0xff, 0x7d]), 400, "malformed_json"],
      ["{", 400, "malformed_json"],
    ];
    for (const [raw, status, code] of cases) {
      const res = await api.call("POST", "/trpc/projects.create", { raw, headers: json });
      assert.equal(res.status, status);
      assert.equal(res.body.error.data.error.code, code);
      assert.equal(res.body.error.data.httpStatus, status);
    }
  });
});
