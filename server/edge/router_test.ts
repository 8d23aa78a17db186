/**
 * What the router (`router.ts`) must not change about the answers it took over from the
 * hand-ordered handler: a HEAD answers as its GET (with its answer's length), paths
 * are routed as sent, and a GET route does not answer other methods.
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
    await t.step(
      "a HEAD answers as its GET, with the length of the body it would have had",
      async () => {
        // RFC 9110: every route that answers GET answers HEAD; without a GET route, HEAD is 404 too.
        const paths = [
          ["/healthz", 200],
          ["/readyz", 200],
          ["/api/v1/projects", 200], // a whole list, streamed: no length either way
          ["/api/v1/projects?limit=10", 200],
          ["/api/v1/openapi.json", 200],
          ["/docs", 200],
          ["/nope", 404],
          ["/api/v1/nope", 404],
        ] as const;
        for (const [path, status] of paths) {
          const get = await call("GET", path);
          const body = await get.bytes();
          const head = await call("HEAD", path);
          assert.equal(get.status, status, path);
          assert.equal(head.status, status, path);
          const streamed = get.headers.get("transfer-encoding") === "chunked";
          assert.equal(
            head.headers.get("content-length"),
            streamed ? null : String(body.byteLength),
            path,
          );
          assert.equal(head.headers.get("content-type"), get.headers.get("content-type"), path);
          assert.equal(head.headers.get("x-content-type-options"), "nosniff", path);
          assert.equal((await head.bytes()).byteLength, 0, path);
        }
        // The key is checked as for its GET.
        const unkeyed = await call("HEAD", "/api/v1/projects", {});
        await unkeyed.body?.cancel();
        assert.equal(unkeyed.status, 401);
        // A REST path no operation takes is checked for a key too, whatever its method.
        for (const method of ["GET", "HEAD", "DELETE"]) {
          const res = await call(method, "/api/v1/nope", {});
          await res.body?.cancel();
          assert.equal(res.status, 401, method);
        }
      },
    );

    await t.step("paths are routed as sent: no percent-decoding, case kept", async () => {
      // Without a key: were one of these routed to REST, its key check would answer 401.
      for (const path of ["/%61pi/v1/projects", "/API/v1/projects", "/healthz/", "//healthz"]) {
        const res = await call("GET", path, {});
        assert.equal(res.status, 404, path);
        assert.equal((await res.json()).error.code, "not_found", path);
      }
      assert.equal((await call("GET", "/api/v1/projects", {})).status, 401);
    });

    await t.step("health checks answer GET and HEAD only; other methods are 404", async () => {
      assert.equal((await call("GET", "/healthz", {})).status, 200);
      for (const method of ["POST", "PUT", "DELETE"]) {
        const res = await call(method, "/healthz", {});
        await res.body?.cancel();
        assert.equal(res.status, 404, method);
      }
    });
  } finally {
    await app.close();
  }
});
