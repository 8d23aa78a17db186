import assert from "node:assert/strict";
import { sql } from "kysely";
import { createApp } from "../app.ts";
import { MAX_BODY_BYTES } from "./body.ts";
import { createLogger } from "../base/log.ts";
import {
  apiSuite,
  backends,
  freshDatabase,
  startTestApp,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../testing/app.ts";

const ENDPOINTS: [string, string][] = [
  ["POST", "/api/v1/projects"],
  ["GET", "/api/v1/projects"],
  ["GET", "/api/v1/projects/a"],
  ["PATCH", "/api/v1/projects/a"],
  ["DELETE", "/api/v1/projects/a"],
  ["POST", "/api/v1/projects/a/probes"],
  ["POST", "/api/v1/probes"],
  ["GET", "/api/v1/probes"],
  ["GET", "/api/v1/projects/a/probes"],
  ["GET", "/api/v1/projects/a/probes/b"],
  ["PATCH", "/api/v1/projects/a/probes/b"],
  ["DELETE", "/api/v1/projects/a/probes/b"],
  ["GET", "/api/v1/settings/iam-alive"],
  ["PATCH", "/api/v1/settings/iam-alive"],
  ["GET", "/api/v1/no/such/route"],
  ["GET", "/trpc/projects.list"],
];

apiSuite("HTTP contract", (test) => {
  test("every endpoint answers 401 without a key or with a wrong one, and changes nothing", async ({ api }) => {
    for (const [method, path] of ENDPOINTS) {
      for (const key of [null, "wrong-key-123", ""]) {
        const body = method === "POST" || method === "PATCH"
          ? { project: "a", url: "http://x/" }
          : undefined;
        const res = await api.call(method, path, { key, body });
        assert.equal(res.status, 401, `${method} ${path} with key ${key}`);
        if (path.startsWith("/trpc")) {
          assert.equal(res.body.error.data.error.code, "unauthorized");
        } else {
          assert.deepEqual(res.body, {
            error: {
              code: "unauthorized",
              message: "A valid X-Service-Api-Key header is required",
            },
          });
        }
      }
    }
    assert.equal((await api.get("/api/v1/projects/a")).status, 404);
  });

  test("an unknown route answers 404 with the error body", async ({ api }) => {
    // (`/` is the dashboard, `/status/…` and `/badge/…` public pages: see dashboard_test.ts.)
    for (const path of ["/api/v1/nothing", "/api/v1", "/elsewhere", "/ui/nothing.js"]) {
      const res = await api.get(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, "not_found");
    }
    const wrongMethod = await api.call("PUT", "/api/v1/projects", { body: { project: "x" } });
    assert.equal(wrongMethod.status, 404);
  });

  test("malformed JSON answers 400 and changes nothing", async ({ api }) => {
    const name = uniqueName();
    for (const raw of [`{"project":"${name}"`, "{'a':1}", "", "nul"]) {
      const res = await api.call("POST", "/api/v1/projects", {
        raw,
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 400, raw);
      assert.equal(res.body.error.code, "malformed_json");
    }
    assert.equal((await api.get(`/api/v1/projects/${name}`)).status, 404);
  });

  test("a body that is not JSON answers 415", async ({ api }) => {
    const name = uniqueName();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", undefined]) {
      const res = await api.call("POST", "/api/v1/projects", {
        raw: `{"project":"${name}"}`,
        headers: type ? { "content-type": type } : {},
      });
      assert.equal(res.status, 415, String(type));
      assert.equal(res.body.error.code, "unsupported_media_type");
    }
    const ok = await api.call("POST", "/api/v1/projects", {
      raw: `{"project":"${name}"}`,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    assert.equal(ok.status, 201);
  });

  test("a body over 1 MiB answers 413", async ({ api }) => {
    const name = uniqueName();
    const big = JSON.stringify({ project: name, description: "x".repeat(MAX_BODY_BYTES) });
    const res = await api.call("POST", "/api/v1/projects", {
      raw: big,
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, "payload_too_large");
    // Without a declared length the stream is cut at the limit as well.
    const stream = new Blob([big]).stream();
    const chunked = await api.call("POST", "/api/v1/projects", {
      raw: stream,
      headers: { "content-type": "application/json" },
    });
    assert.equal(chunked.status, 413);
    assert.equal((await api.get(`/api/v1/projects/${name}`)).status, 404);
  });

  test("deep nesting, long arrays and non-object bodies answer 422", async ({ api }) => {
    const p = uniqueName();
    await api.post("/api/v1/projects", { project: p });
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const bodies = [
      { url: "http://x.test/", body: deep },
      { url: "http://x.test/", body: Array(1001).fill(0) },
      [{ url: "http://x.test/" }],
      "http://x.test/",
    ];
    for (const body of bodies) {
      const res = await api.post(`/api/v1/projects/${p}/probes`, body);
      assert.equal(res.status, 422);
      assert.equal(res.body.error.code, "validation_failed");
    }
    assert.equal((await api.get(`/api/v1/projects/${p}/probes`)).body.meta.count, 0);
  });

  test("every answer says nosniff and no-store", async ({ api }) => {
    for (
      const res of [
        await api.get("/api/v1/projects"),
        await api.get("/nope"),
        await api.get("/healthz"),
      ]
    ) {
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.equal(res.headers.get("access-control-allow-origin"), null);
    }
  });

  test("health and readiness need no key and say nothing more", async ({ api }) => {
    const health = await api.get("/healthz", { key: null });
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: "ok" });
    const ready = await api.get("/readyz", { key: null });
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: "ready" });
  });

  test("the same procedures answer on /trpc with the same envelope and errors", async ({ api }) => {
    const name = uniqueName();
    const created = await api.post("/trpc/projects.create", { project: name });
    assert.equal(created.status, 200);
    assert.deepEqual(created.body.result.data, { data: { project: name } });
    const input = encodeURIComponent(JSON.stringify({ project: name }));
    const got = await api.get(`/trpc/projects.get?input=${input}`);
    assert.equal(got.body.result.data.data.status, "enabled");
    const dup = await api.post("/trpc/projects.create", { project: name });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error.data.error.code, "conflict");
    const bad = await api.post("/trpc/settings.updateIamAlive", { interval_hours: 99 });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.data.error.code, "validation_failed");
    assert.equal(bad.body.error.data.error.details[0].path, "interval_hours");
    assert.ok(!bad.text.includes("stack"));
  });
});

for (const backend of backends()) {
  Deno.test(`any key of a comma-separated list is accepted [${backend}]`, async () => {
    const app = await startTestApp(backend, { apiKeys: ["old-key-123456", "new-key-654321"] });
    try {
      const api = new TestClient(app.handler);
      assert.equal((await api.get("/api/v1/projects", { key: "old-key-123456" })).status, 200);
      assert.equal((await api.get("/api/v1/projects", { key: "new-key-654321" })).status, 200);
      assert.equal((await api.get("/api/v1/projects", { key: "new-key-65432" })).status, 401);
    } finally {
      await app.close();
    }
  });

  Deno.test(`each keyed request logs one JSON line without keys or bodies [${backend}]`, async () => {
    const lines: string[] = [];
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("info", (line) => lines.push(line)),
    });
    let closed = false;
    try {
      const api = new TestClient(app.handler);
      await api.post("/api/v1/projects", { project: "logged", description: "secret-body" });
      await api.get("/api/v1/projects", { key: "wrong-key-123" });
      // The request without a valid key is counted in the summary line, written at shutdown.
      assert.equal(lines.length, 1);
      closed = true;
      await app.close();
      assert.equal(lines.length, 2);
      const [first, second] = lines.map((l) => JSON.parse(l));
      assert.equal(first.msg, "request");
      assert.equal(first.method, "POST");
      assert.equal(first.path, "/api/v1/projects");
      assert.equal(first.status, 201);
      assert.equal(typeof first.duration_ms, "number");
      assert.equal(second.msg, "requests");
      assert.deepEqual(second.counts, [
        { route: "/api/v1/projects", method: "GET", status: 401, count: 1 },
      ]);
      const all = lines.join("\n");
      assert.ok(
        !all.includes(TEST_API_KEY) && !all.includes("wrong-key") && !all.includes("secret-body"),
      );
    } finally {
      if (!closed) await app.close();
    }
  });

  Deno.test(`a failure's log carries the id of its request's line [${backend}]`, async () => {
    const lines: Record<string, unknown>[] = [];
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("info", (line) => lines.push(JSON.parse(line))),
    });
    try {
      const api = new TestClient(app.handler);
      const db = app.database.db;
      // Archiving a `doomed-` project fails unexpectedly: a 500, logged with its stack.
      await sql.raw(`
        create function refuse_archive() returns trigger language plpgsql as $$
        begin
          if new.project like 'doomed-%' then raise exception 'archive refused'; end if;
          return new;
        end $$`).execute(db);
      await sql.raw(`create trigger refuse_archive before insert on archived_projects
          for each row execute function refuse_archive()`).execute(db);
      const names = ["rest", "fast", "batch"].map((how) => uniqueName(`doomed-${how}`));
      for (const project of names) await api.post("/api/v1/projects", { project });
      lines.length = 0;
      // REST, the tRPC fast path, tRPC's own handler (a batch).
      const answers = [
        await api.delete(`/api/v1/projects/${names[0]}`),
        await api.post("/trpc/projects.delete", { project: names[1] }),
        await api.post("/trpc/projects.delete?batch=1", { 0: { project: names[2] } }),
      ];
      assert.deepEqual(answers.map((a) => a.status), [500, 500, 500]);
      const requests = lines.filter((l) => l.msg === "request");
      const failures = lines.filter((l) => l.msg === "request failed");
      assert.equal(requests.length, 3);
      assert.equal(failures.length, 3);
      const ids = requests.map((l) => l.request_id);
      assert.ok(ids.every((id) => typeof id === "string" && id.length > 0), JSON.stringify(ids));
      assert.equal(new Set(ids).size, 3, "every request has an id of its own");
      for (const [i, failure] of failures.entries()) {
        assert.match(String(failure.error), /archive refused/);
        assert.equal(failure.request_id, ids[i], `failure ${i} names its request`);
      }
      // The id is the log's: no answer carries it.
      for (const answer of answers) {
        for (const [, value] of answer.headers) assert.ok(!ids.includes(value));
        assert.ok(!ids.some((id) => answer.text.includes(String(id))));
      }
    } finally {
      await app.close();
    }
  });
}
