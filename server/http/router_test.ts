/**
 * What the router (`router.ts`) must not change about the answers it took over from the
 * hand-ordered handler (issue 20): a HEAD keeps its GET answer's length, paths are routed as
 * sent, and a GET route does not answer other methods.
 */
import assert from "node:assert/strict";
import { startTestApp, TEST_API_KEY } from "../testing/app.ts";

const BASE = "http://service.test";
const key = { "x-service-api-key": TEST_API_KEY };

Deno.test("the router answers as the handler it replaced", async (t) => {
  const app = await startTestApp("pglite");
  const call = (method: string, path: string, headers: Record<string, string> = key) =>
    app.handler(new Request(BASE + path, { method, headers }), { address: "127.0.0.1" });
  try {
    await t.step("a HEAD's answer keeps the length of the body it would have had", async () => {
      // HEAD is no GET here: REST and the health checks have no HEAD route (404, as before
      // the router, which routes a HEAD as its GET and drops the body).
      const notFound = await (await call("GET", "/nope")).bytes();
      for (const path of ["/api/v1/projects", "/healthz", "/nope"]) {
        const head = await call("HEAD", path);
        assert.equal(head.status, 404, path);
        assert.equal(head.headers.get("content-length"), String(notFound.byteLength), path);
        assert.equal(head.headers.get("content-type"), "application/json", path);
        assert.equal((await head.bytes()).byteLength, 0, path);
      }
    });

    await t.step("paths are routed as sent: no percent-decoding, case kept", async () => {
      // Without a key: were one of these routed to REST, its key check would answer 401.
      for (const path of ["/%61pi/v1/projects", "/API/v1/projects", "/healthz/", "//healthz"]) {
        const res = await call("GET", path, {});
        assert.equal(res.status, 404, path);
        assert.equal((await res.json()).error.code, "not_found", path);
      }
      assert.equal((await call("GET", "/api/v1/projects", {})).status, 401);
    });

    await t.step("health checks answer GET only; HEAD and others are 404", async () => {
      assert.equal((await call("GET", "/healthz", {})).status, 200);
      for (const method of ["HEAD", "POST"]) {
        const res = await call(method, "/healthz", {});
        await res.body?.cancel();
        assert.equal(res.status, 404, method);
      }
    });
  } finally {
    await app.close();
  }
});
