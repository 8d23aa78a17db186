import assert from "node:assert/strict";
import { sql } from "kysely";
import { json as jsonColumn } from "../storage/json.ts";
import { migrateToLatest } from "../storage/migrator.ts";
import { probeIdOf } from "../domain/probe_id.ts";
import { ERRORS } from "./errors.ts";
import { createPrincipalCheck } from "../domain/access/api_key.ts";

import { createHttpHandler } from "../edge/handler.ts";
import { readOpenApiJson } from "../edge/openapi_served.ts";
import { createLogger } from "../base/log.ts";
import {
  backends,
  freshDatabase,
  TEST_API_KEY,
  TEST_READ_KEY,
  TestClient,
  uniqueName,
} from "../testing/app.ts";
import { appRouter } from "./router.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const json = { "content-type": "application/json" };

for (const backend of backends()) {
  Deno.test(`every error code answers the same status and body on REST and /trpc [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    await migrateToLatest(handle.db);
    // No I'm alive reporter here, so its test answers 503; a bucket of 40 requests (the clock
    // stands still), then 429.
    const handler = createHttpHandler({
      router: appRouter,
      openApiJson: readOpenApiJson(),
      db: handle.db,
      checkKey: createPrincipalCheck([TEST_API_KEY], [TEST_READ_KEY]),
      log: createLogger("silent"),
      config: { rateLimitPerSecond: 20, maxAnswerBytes: 65_536 },
      now: () => 0,
    });
    const api = new TestClient(handler);
    const trpcInput = (value: unknown) => `?input=${encodeURIComponent(JSON.stringify(value))}`;
    const seen = new Set<string>();
    /** Sends a REST call and its /trpc twin; both must fail alike, with `code`. */
    const same = async (
      code: keyof typeof ERRORS,
      rest: Promise<{ status: number; body: Json }>,
      trpc: Promise<{ status: number; body: Json }>,
    ) => {
      const [r, t] = [await rest, await trpc];
      assert.equal(r.status, ERRORS[code].status, `REST ${code}`);
      assert.equal(r.body.error.code, code, `REST ${code}`);
      assert.equal(t.status, r.status, `/trpc ${code} status`);
      assert.deepEqual(t.body.error.data.error, r.body.error, `/trpc ${code} body`);
      assert.equal(t.body.error.data.code, ERRORS[code].trpc);
      assert.equal(t.body.error.message, r.body.error.message);
      seen.add(code);
    };
    try {
      const project = uniqueName("doomed");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      await same(
        "unauthorized",
        api.get("/api/v1/projects", { key: null }),
        api.get("/trpc/projects.list", { key: null }),
      );
      await same(
        "not_found",
        api.get("/api/v1/projects/nope"),
        api.get(`/trpc/projects.get${trpcInput({ project: "nope" })}`),
      );
      await same(
        "conflict",
        api.post("/api/v1/projects", { project }),
        api.post("/trpc/projects.create", { project }),
      );
      await same(
        "validation_failed",
        api.post("/api/v1/projects", { project: "" }),
        api.post("/trpc/projects.create", { project: "" }),
      );
      await same(
        "malformed_json",
        api.call("POST", "/api/v1/projects", { raw: "{", headers: json }),
        api.call("POST", "/trpc/projects.create", { raw: "{", headers: json }),
      );
      const big = "x".repeat(1024 * 1024 + 1);
      await same(
        "payload_too_large",
        api.call("POST", "/api/v1/projects", { raw: big, headers: json }),
        api.call("POST", "/trpc/projects.create", { raw: big, headers: json }),
      );
      const text = { "content-type": "text/plain" };
      await same(
        "unsupported_media_type",
        api.call("POST", "/api/v1/projects", { raw: "{}", headers: text }),
        api.call("POST", "/trpc/projects.create", { raw: "{}", headers: text }),
      );
      await same(
        "service_unavailable",
        api.post("/api/v1/settings/iam-alive/test"),
        api.post("/trpc/settings.testIamAlive", {}),
      );
      await same(
        "forbidden",
        api.post("/api/v1/projects", { project: "x-ro" }, { key: TEST_READ_KEY }),
        api.post("/trpc/projects.create", { project: "x-ro" }, { key: TEST_READ_KEY }),
      );
      await same(
        "out_of_scope",
        api.post("/api/v1/runner/claim", { runner: "r", version: "1", wait_seconds: 0 }),
        api.post("/trpc/runner.claim", { runner: "r", version: "1", wait_seconds: 0 }),
      );
      // A page of probes past the answer limit (64 KiB here): 20 of 5 KB, written directly.
      const headers = jsonColumn({ "x-big": "v".repeat(5000) });
      await handle.db.insertInto("probes").values(
        Array.from({ length: 20 }, (_, i) => ({
          project,
          probe_id: probeIdOf("GET", `https://big-${i}.example.com/`),
          url: `https://big-${i}.example.com/`,
          method: "GET",
          headers,
          body: null,
          latency: 500,
        })),
      ).execute();
      await same(
        "response_too_large",
        api.get(`/api/v1/projects/${project}/probes?limit=100`),
        api.get(`/trpc/probes.listByProject${trpcInput({ project, limit: 100 })}`),
      );
      // An archive that fails in the database: a 500 that names nothing of the cause.
      await sql.raw(`
        create function refuse_archive() returns trigger language plpgsql as $$
        begin raise exception 'secret driver detail'; end $$`).execute(handle.db);
      await sql.raw(`create trigger refuse_archive before insert on archived_projects
          for each row execute function refuse_archive()`).execute(handle.db);
      await same(
        "internal",
        api.delete(`/api/v1/projects/${project}`),
        api.post("/trpc/projects.delete", { project }),
      );
      for (let i = 0; i < 40; i++) await api.get("/healthz");
      while ((await api.get("/api/v1/projects")).status !== 429) { /* empty the bucket */ }
      await same(
        "rate_limited",
        api.get("/api/v1/projects"),
        api.get("/trpc/projects.list"),
      );
      const missing = Object.keys(ERRORS).filter((code) =>
        !seen.has(code) && !["bad_request", "method_not_allowed"].includes(code)
      );
      assert.deepEqual(missing, [], "every error the REST API answers was compared");
    } finally {
      await handle.close();
    }
  });
}

Deno.test("a query sent by POST on /trpc answers 405 in the same shape", async () => {
  const handle = await freshDatabase("pglite");
  try {
    const api = new TestClient(createHttpHandler({
      router: appRouter,
      openApiJson: readOpenApiJson(),
      db: handle.db,
      checkKey: createPrincipalCheck([TEST_API_KEY], [TEST_READ_KEY]),
      log: createLogger("silent"),
    }));
    const res = await api.get(`/trpc/projects.create?input=${encodeURIComponent("{}")}`);
    assert.equal(res.status, 405);
    assert.deepEqual(res.body.error.data.error, {
      code: "method_not_allowed",
      message: "Method not allowed",
    });
  } finally {
    await handle.close();
  }
});
