// How a key is presented (X-Service-Api-Key or Authorization: Bearer) and the endpoints outside
// /api/v1 and /trpc that need one (HttpDeps.keyed), through the real handler.
import assert from "node:assert/strict";
import { migrateToLatest } from "../storage/migrator.ts";
import { createLogger } from "../base/log.ts";
import {
  backends,
  freshDatabase,
  TEST_API_KEY,
  TEST_READ_KEY,
  uniqueName,
} from "../testing/app.ts";
import { appRouter } from "../procedures/router.ts";
import { createPrincipalCheck } from "../domain/access/api_key.ts";
import { createHttpHandler } from "./handler.ts";
import { presentedKey } from "../domain/access/presented_key.ts";
import { readOpenApiJson } from "./openapi_served.ts";

Deno.test("a key is presented as X-Service-Api-Key or as an Authorization bearer token", () => {
  const of = (headers: Record<string, string>) => presentedKey(new Headers(headers));
  assert.equal(of({ "x-service-api-key": "k1" }), "k1");
  assert.equal(of({ authorization: "Bearer k2" }), "k2");
  assert.equal(of({ authorization: "bearer   k3 " }), "k3");
  // The header wins over the bearer token; other schemes present nothing.
  assert.equal(of({ "x-service-api-key": "k1", authorization: "Bearer k2" }), "k1");
  for (const authorization of ["Basic azE6eA==", "Bearer", "Bearer a b", "k2"]) {
    assert.equal(of({ authorization }), null, authorization);
  }
  assert.equal(of({}), null);
});

for (const backend of backends()) {
  Deno.test(`a bearer token is the same key everywhere; keyed endpoints see its scope [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    await migrateToLatest(handle.db);
    const scopes: string[] = [];
    const handler = createHttpHandler({
      router: appRouter,
      openApiJson: readOpenApiJson(),
      db: handle.db,
      checkKey: createPrincipalCheck([TEST_API_KEY], [TEST_READ_KEY]),
      log: createLogger("silent"),
      keyed: [{
        path: "/scope",
        handle: (_request, _url, scope) => {
          scopes.push(scope);
          return Promise.resolve(new Response(scope));
        },
      }],
    });
    const call = (path: string, headers: Record<string, string>, init: RequestInit = {}) =>
      handler(new Request(`http://service.test${path}`, { ...init, headers }));
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    try {
      const project = uniqueName("bearer");
      const made = await call("/api/v1/projects", {
        ...bearer(TEST_API_KEY),
        "content-type": "application/json",
      }, { method: "POST", body: JSON.stringify({ project }) });
      assert.equal(made.status, 201, await made.clone().text());
      await made.body?.cancel();

      const listed = await call("/api/v1/projects", bearer(TEST_READ_KEY));
      assert.equal(listed.status, 200);
      assert.ok((await listed.text()).includes(project));
      const viaTrpc = await call("/trpc/projects.get?input=" + JSON.stringify({ project }), {
        ...bearer(TEST_READ_KEY),
      });
      assert.equal(viaTrpc.status, 200);
      await viaTrpc.body?.cancel();

      const refused = await call(`/api/v1/projects/${project}`, bearer(TEST_READ_KEY), {
        method: "DELETE",
      });
      assert.equal(refused.status, 403);
      assert.equal((await refused.json()).error.code, "forbidden");

      for (const headers of [{}, bearer("wrong-key-000000"), { authorization: "Basic eDp5" }]) {
        const answer = await call("/api/v1/projects", headers);
        assert.equal(answer.status, 401);
        assert.equal((await answer.json()).error.code, "unauthorized");
        const keyedAnswer = await call("/scope", headers);
        assert.equal(keyedAnswer.status, 401);
        assert.equal((await keyedAnswer.json()).error.code, "unauthorized");
      }
      assert.deepEqual(scopes, [], "a keyed endpoint is not asked without a valid key");

      assert.equal(await (await call("/scope", bearer(TEST_READ_KEY))).text(), "read");
      assert.equal(
        await (await call("/scope", { "x-service-api-key": TEST_API_KEY })).text(),
        "write",
      );
      assert.deepEqual(scopes, ["read", "write"]);
      // Only the exact path: anything else outside the API is still not found.
      const other = await call("/scope/more", bearer(TEST_API_KEY));
      assert.equal(other.status, 404);
      await other.body?.cancel();
    } finally {
      await handle.close();
    }
  });
}
