// The standalone runner's `/metrics` (`standalone.ts`) on a port of its own: its answers, and its
// refusals, which are the edge's error answers with the same headers.
import assert from "node:assert/strict";
import { createLogger } from "../../base/log.ts";
import { createRegistry } from "./registry.ts";
import { serveRunnerMetrics } from "./standalone.ts";

const KEY = "runner-metrics-key-123";

Deno.test("the standalone /metrics answers with the key and refuses as the edge does", async () => {
  const registry = createRegistry();
  const controller = new AbortController();
  const server = await serveRunnerMetrics({
    hostname: "127.0.0.1",
    port: 0,
    registry,
    checkKey: (presented) => presented === KEY ? "read" : null,
    // A burst of one: the second failed key check of an address is refused 429.
    authFailuresPerSecond: 0.001,
    log: createLogger("silent"),
    signal: controller.signal,
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(base + path, init);
    return { res, body: await res.json().catch(() => null) };
  };
  try {
    const ok = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("content-type"), registry.contentType);
    await ok.body?.cancel();
    assert.deepEqual((await call("/healthz")).body, { status: "ok" });

    const refusals: [string, RequestInit, number, string][] = [
      ["/api/v1/projects", { headers: { "x-service-api-key": KEY } }, 404, "not_found"],
      [
        "/metrics",
        { method: "POST", headers: { "x-service-api-key": KEY } },
        405,
        "method_not_allowed",
      ],
      ["/metrics", {}, 401, "unauthorized"],
      ["/metrics", { headers: { "x-service-api-key": "wrong-key-123" } }, 429, "rate_limited"],
    ];
    for (const [path, init, status, code] of refusals) {
      const { res, body } = await call(path, init);
      const what = `${init.method ?? "GET"} ${path} → ${status}`;
      assert.equal(res.status, status, what);
      assert.equal(body.error.code, code, what);
      assert.equal(res.headers.get("content-type"), "application/json", what);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", what);
      assert.equal(res.headers.get("cache-control"), "no-store", what);
      if (status === 405) assert.equal(res.headers.get("allow"), "GET, HEAD");
      if (status === 429) assert.match(res.headers.get("retry-after") ?? "", /^\d+$/);
    }
  } finally {
    controller.abort();
    await server.finished;
  }
});
