import assert from "node:assert/strict";
import { compileErrors, validate } from "@readme/openapi-parser";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import {
  ALERT_EVENT_TYPES,
  alertEvent,
  MAX_HEADER_NAME_LENGTH,
  MAX_HEADERS,
  PROBE_METHODS,
  PROJECT_NAME_PATTERN,
} from "@probe/shared";
import { z } from "zod";
import { startTestApp, TestClient } from "../testing/app.ts";

/**
 * Every operation of the service with every status it can answer. Every operation can answer
 * 401 (no key), 429 (rate limited), 500 and 503 (database unavailable); those that take input
 * 422; those that read a body 400, 413 and 415; all but GETs 403 (a read-only key); GETs 413
 * (an answer past MAX_ANSWER_BYTES).
 */
const ANY = [401, 429, 500, 503];
const INPUT = [...ANY, 422];
const BODY = [...INPUT, 400, 413, 415];
/**
 * Every operation answers 403 (a location token outside the runner protocol, or a key inside
 * it; besides, a read-only key on any operation but a GET); a GET 413 (too big an answer).
 */
const withForbidden = (spec: Record<string, number[]>) =>
  Object.fromEntries(
    Object.entries(spec).map(([key, statuses]) => [
      key,
      key.startsWith("GET ") ? [...statuses, 403, 413] : [...statuses, 403],
    ]),
  );
const SPEC: Record<string, number[]> = withForbidden({
  "POST /projects": [201, 409, ...BODY],
  "GET /projects": [200, ...INPUT],
  "GET /projects/{project}": [200, 404, ...INPUT],
  "PATCH /projects/{project}": [200, 404, ...BODY],
  "DELETE /projects/{project}": [200, 404, ...INPUT],
  "POST /projects/{project}/probes": [200, 201, 404, ...BODY],
  "POST /probes": [200, 201, 404, ...BODY],
  "GET /probes": [200, ...INPUT],
  "GET /projects/{project}/probes": [200, ...INPUT],
  "GET /projects/{project}/probes/{probeId}": [200, 404, ...INPUT],
  "PATCH /projects/{project}/probes/{probeId}": [200, 404, ...BODY],
  "DELETE /projects/{project}/probes/{probeId}": [204, 404, ...INPUT],
  "GET /settings/iam-alive": [200, ...ANY],
  "PATCH /settings/iam-alive": [200, ...BODY],
  // Beyond the interface document: the I'm alive reports (docs/iam_alive.md).
  "POST /settings/iam-alive/test": [200, ...BODY],
  "GET /settings/iam-alive/deliveries": [200, ...INPUT],
  // Beyond the interface document: the probe runner's results (docs/runner.md).
  "GET /projects/{project}/probes/{probeId}/results": [200, 404, ...INPUT],
  "GET /projects/{project}/probes/{probeId}/stats": [200, 404, ...INPUT],
  "GET /projects/{project}/status": [200, 404, ...INPUT],
  // Beyond the interface document: notification targets (docs/notification_targets.md).
  "POST /projects/{project}/probes/{probeId}/run": [200, 404, 409, ...BODY],
  "GET /incidents": [200, 404, ...INPUT],
  "GET /incidents/{id}": [200, 404, ...INPUT],
  "POST /incidents/{id}/acknowledge": [200, 404, 409, ...BODY],
  "GET /settings/alerts": [200, ...ANY],
  "PATCH /settings/alerts": [200, ...BODY],
  "GET /projects/{project}/alerts": [200, 404, ...INPUT],
  "PATCH /projects/{project}/alerts": [200, 404, ...BODY],
  "GET /projects/{project}/maintenance": [200, 404, ...INPUT],
  "POST /projects/{project}/maintenance": [201, 404, 409, ...BODY],
  "DELETE /projects/{project}/maintenance/{id}": [204, 404, ...INPUT],
  "GET /overview": [200, 404, ...INPUT],
  "GET /projects/{project}/probes/{probeId}/series": [200, 404, ...INPUT],
  "GET /projects/{project}/status-page": [200, 404, ...INPUT],
  "PATCH /projects/{project}/status-page": [200, 404, ...BODY],
  "GET /projects/{project}/badges": [200, 404, ...INPUT],
  "POST /projects/{project}/badges": [201, 404, 409, ...BODY],
  "POST /projects/{project}/badges/{id}/rotate": [200, 404, ...BODY],
  "DELETE /projects/{project}/badges/{id}": [204, 404, ...INPUT],
  // Beyond the interface document: heartbeats (docs/heartbeats.md).
  "POST /projects/{project}/heartbeats": [201, 404, 409, ...BODY],
  "GET /projects/{project}/heartbeats": [200, 404, ...INPUT],
  "GET /projects/{project}/heartbeats/{name}": [200, 404, ...INPUT],
  "PATCH /projects/{project}/heartbeats/{name}": [200, 404, ...BODY],
  "DELETE /projects/{project}/heartbeats/{name}": [204, 404, ...INPUT],
  "GET /projects/{project}/heartbeats/{name}/pings": [200, 404, ...INPUT],
  "POST /notification-targets": [201, 409, ...BODY],
  "GET /notification-targets": [200, ...ANY],
  "GET /notification-targets/{name}": [200, 404, ...INPUT],
  "PATCH /notification-targets/{name}": [200, 404, 409, ...BODY],
  "DELETE /notification-targets/{name}": [204, 404, 409, ...INPUT],
  "POST /notification-targets/{name}/test": [200, 404, ...BODY],
  "GET /notification-target-kinds": [200, ...ANY],
  "GET /whoami": [200, ...ANY],
  // Beyond the interface document: locations (docs/locations.md).
  "GET /locations": [200, ...ANY],
  "POST /locations": [201, 409, ...BODY],
  "GET /locations/{location}": [200, 404, ...INPUT],
  "PATCH /locations/{location}": [200, 404, 409, ...BODY],
  "DELETE /locations/{location}": [204, 404, 409, ...INPUT],
  "POST /locations/{location}/token": [200, 404, 409, ...BODY],
  // API keys made through the API (docs/access.md): admin keys only.
  "GET /api-keys": [200, ...ANY],
  "POST /api-keys": [201, 409, ...BODY],
  "GET /api-keys/{name}": [200, 404, ...INPUT],
  "PATCH /api-keys/{name}": [200, 404, 409, ...BODY],
  "DELETE /api-keys/{name}": [204, 404, 409, ...INPUT],
  "POST /api-keys/{name}/rotate": [200, 404, 409, ...BODY],
  // The audit log (docs/access.md): admin keys only, read only.
  "GET /audit-log": [200, ...INPUT],
  // Dashboard sessions (docs/access.md): an admin's call reaches everyone's, others their own.
  "GET /sessions": [200, ...INPUT],
  "DELETE /sessions/{id}": [204, 404, ...INPUT],
  // The runner protocol: location tokens only (docs/locations.md).
  "POST /runner/claim": [200, ...BODY],
  "POST /runner/results": [200, 409, ...BODY],
});

/** The operations whose answers carry `meta` besides `data`. */
const WITH_META = new Set([
  "GET /api-keys",
  "GET /audit-log",
  "GET /sessions",
  "GET /projects",
  "DELETE /projects/{project}",
  "POST /projects/{project}/probes",
  "POST /probes",
  "GET /probes",
  "GET /projects/{project}/probes",
  "GET /settings/iam-alive/deliveries",
  "GET /projects/{project}/probes/{probeId}/results",
  "GET /projects/{project}/status",
  "GET /notification-targets",
  "GET /notification-target-kinds",
  "GET /incidents",
  "GET /projects/{project}/maintenance",
  "GET /overview",
  "GET /projects/{project}/badges",
  "GET /projects/{project}/heartbeats",
  "GET /projects/{project}/heartbeats/{name}/pings",
  "GET /locations",
]);

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

// deno-lint-ignore no-explicit-any
type Json = any;

async function servedDocument(): Promise<{ text: string; doc: Json }> {
  const app = await startTestApp("pglite");
  try {
    const res = await new TestClient(app.handler).get("/api/v1/openapi.json", { key: null });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    return { text: res.text, doc: res.body };
  } finally {
    await app.close();
  }
}

function operations(doc: Json): [string, Json][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Json])
  );
}

Deno.test("the OpenAPI document", async (t) => {
  const { text, doc } = await servedDocument();

  await t.step("is served without a key and is OpenAPI 3.1", () => {
    assert.equal(doc.openapi, "3.1.0");
    assert.deepEqual(doc.servers, [{ url: "/api/v1", description: "This service" }]);
  });

  await t.step("passes @readme/openapi-parser validation", async () => {
    const result = await validate(JSON.parse(text));
    assert.ok(result.valid, compileErrors(result));
    assert.deepEqual(result.warnings, []);
  });

  await t.step("passes Redocly's recommended rules with no error or warning", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({
      source: text,
      absoluteRef: "openapi.json",
      config,
    });
    const lines = problems.map((p) =>
      `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(", ")}`
    );
    assert.deepEqual(lines, []);
  });

  await t.step("has every operation of the spec, and no other", () => {
    assert.deepEqual(operations(doc).map(([key]) => key).sort(), Object.keys(SPEC).sort());
  });

  await t.step("answers each operation with the spec's status codes", () => {
    for (const [key, op] of operations(doc)) {
      const expected = [...new Set(SPEC[key])].sort((a, b) => a - b);
      assert.deepEqual(Object.keys(op.responses).map(Number), expected, key);
    }
  });

  await t.step("describes successes with the data/meta envelope; 204 has no body", () => {
    for (const [key, op] of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        if (Number(status) >= 300) continue;
        const r = response as Json;
        if (status === "204") {
          assert.equal(r.content, undefined, key);
          continue;
        }
        const schema = r.content["application/json"].schema;
        assert.ok(schema.required.includes("data"), `${key} ${status} has no data`);
        assert.equal(schema.required.includes("meta"), WITH_META.has(key), `${key} ${status} meta`);
      }
    }
  });

  await t.step("describes every failure with the one error schema", () => {
    const error = doc.components.schemas.Error;
    assert.deepEqual(error.required, ["error"]);
    assert.deepEqual(error.properties.error.required, ["code", "message"]);
    assert.ok(error.properties.error.properties.details);
    assert.deepEqual(
      Object.keys(doc.components.schemas).filter((n) => n !== "Error"),
      [],
      "no other error schemas",
    );
    for (const [key, op] of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        if (Number(status) < 400) continue;
        const media = (response as Json).content["application/json"];
        assert.deepEqual(media.schema, { $ref: "#/components/schemas/Error" }, `${key} ${status}`);
        const examples = media.example ? [media.example] : Object.values(media.examples)
          .map((e) => (e as Json).value);
        assert.ok(examples.length > 0, `${key} ${status} has an example`);
        for (const example of examples) assert.equal(typeof example.error.code, "string");
      }
    }
  });

  await t.step("declares the X-Service-Api-Key scheme and requires it everywhere", () => {
    assert.deepEqual(doc.components.securitySchemes.ApiKey, {
      type: "apiKey",
      in: "header",
      name: "X-Service-Api-Key",
      description: "An API key of the service: SERVICE_API_KEY (read and write) or " +
        "SERVICE_API_KEYS_READONLY (GET operations only).",
    });
    for (const [key, op] of operations(doc)) {
      assert.deepEqual(op.security, [{ ApiKey: [] }], key);
    }
  });

  await t.step("describes the alert event webhook, signed per Standard Webhooks", () => {
    const post = doc.webhooks.alertEvent.post;
    const { $schema: _, ...schema } = z.toJSONSchema(alertEvent, { io: "output" });
    assert.deepEqual(post.requestBody.content["application/json"].schema, schema);
    assert.deepEqual(post.requestBody.content["application/json"].schema.properties.type.enum, [
      ...ALERT_EVENT_TYPES,
    ]);
    assert.deepEqual(
      post.parameters.map((p: Json) => [p.in, p.name, p.required]),
      [
        ["header", "webhook-id", true],
        ["header", "webhook-timestamp", true],
        ["header", "webhook-signature", true],
      ],
    );
    assert.ok(doc.tags.some((tag: Json) => tag.name === post.tags[0]));
  });

  await t.step("carries the bounds the server enforces on path names, methods and headers", () => {
    const name = { minLength: 1, maxLength: 64, pattern: PROJECT_NAME_PATTERN.source };
    const named = (key: string, param: string) => {
      const [method, path] = key.split(" ");
      const found = doc.paths[path][method.toLowerCase()].parameters
        .find((p: Json) => p.in === "path" && p.name === param);
      assert.ok(found, `${key} has the path parameter ${param}`);
      return found.schema;
    };
    const withProject = operations(doc).filter(([key]) => key.includes("{project}"));
    assert.equal(withProject.length, 30, "every operation under /projects/{project}");
    for (const [key] of withProject) {
      assert.deepEqual(named(key, "project"), { type: "string", ...name }, key);
    }
    for (const [key] of operations(doc).filter(([key]) => key.includes("{name}"))) {
      assert.deepEqual(named(key, "name"), { type: "string", ...name }, key);
    }
    const bodies = [
      "POST /projects/{project}/probes",
      "POST /probes",
      "PATCH " +
      "/projects/{project}/probes/{probeId}",
    ];
    for (const key of bodies) {
      const [method, path] = key.split(" ");
      const fields = doc.paths[path][method.toLowerCase()].requestBody
        .content["application/json"].schema.properties;
      assert.deepEqual(fields.method.enum, [...PROBE_METHODS], key);
      assert.equal(fields.headers.maxProperties, MAX_HEADERS, key);
      assert.deepEqual(fields.headers.propertyNames, {
        type: "string",
        maxLength: MAX_HEADER_NAME_LENGTH,
        pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
      }, key);
      assert.equal(fields.headers.additionalProperties.maxLength, 8192, key);
    }
    assert.deepEqual(
      doc.paths["/probes"].post.requestBody.content["application/json"].schema.properties.project,
      { type: "string", ...name },
    );
    const channels = doc.paths["/settings/iam-alive"].patch.requestBody
      .content["application/json"].schema.properties.channels;
    assert.deepEqual([channels.minItems, channels.maxItems, channels.uniqueItems], [1, 3, true]);
  });

  await t.step("gives every operation a summary, a tag and an operationId", () => {
    const tags = new Set(doc.tags.map((tag: Json) => tag.name));
    for (const [key, op] of operations(doc)) {
      assert.ok(op.summary, `${key} summary`);
      assert.equal(op.tags.length, 1, `${key} tags`);
      assert.ok(tags.has(op.tags[0]), `${key} tag ${op.tags[0]} is declared`);
      assert.match(op.operationId, /^[a-z][A-Za-z]*-[A-Za-z]+$/);
    }
  });
});

/** The `{ code, message }` examples the document gives for an operation's status. */
function documentedErrors(doc: Json, method: string, path: string, status: number) {
  const media = doc.paths[path][method].responses[status]?.content["application/json"];
  assert.ok(media, `${method.toUpperCase()} ${path} documents ${status}`);
  const examples = media.example ? [media.example] : Object.values(media.examples)
    .map((e) => (e as Json).value);
  return examples.map((e: Json) => e.error);
}

Deno.test("the document's error examples are what the server answers", async () => {
  const app = await startTestApp("pglite");
  const api = new TestClient(app.handler);
  const doc = (await api.get("/api/v1/openapi.json", { key: null })).body;
  const expectDocumented = async (
    method: string,
    path: string,
    answer: Promise<{ status: number; body: Json }>,
  ) => {
    const { status, body } = await answer;
    const { code, message } = body.error;
    assert.ok(
      documentedErrors(doc, method, path, status).some((e: Json) =>
        e.code === code && e.message === message
      ),
      `${method.toUpperCase()} ${path} answered ${status} ${code} "${message}", not documented`,
    );
  };
  try {
    const name = `doc-${crypto.randomUUID().slice(0, 8)}`;
    assert.equal((await api.post("/api/v1/projects", { project: name })).status, 201);
    await expectDocumented("get", "/projects", api.get("/api/v1/projects", { key: null }));
    await expectDocumented("get", "/projects", api.get("/api/v1/projects?project=a%00b"));
    await expectDocumented("get", "/probes", api.get("/api/v1/probes?project=a%00b"));
    await expectDocumented("get", "/projects/{project}", api.get("/api/v1/projects/nope-x"));
    await expectDocumented(
      "post",
      "/projects",
      api.post("/api/v1/projects", { project: name }),
    );
    await expectDocumented("post", "/projects", api.post("/api/v1/projects", {}));
    // Bodies the HTTP edge refuses: malformed, not JSON, too large, empty, not UTF-8.
    const refusedBodies: [BodyInit, string][] = [
      ["{", "application/json"],
      ["x", "text/plain"],
      ["x".repeat(1024 * 1024 + 1), "application/json"],
      ["", "application/json"],
      [new Uint8Array([0x7b, 0xff, 0x7d]), "application/json"],
    ];
    for (const [raw, type] of refusedBodies) {
      await expectDocumented(
        "post",
        "/projects",
        api.call("POST", "/api/v1/projects", { raw, headers: { "content-type": type } }),
      );
    }
    await expectDocumented(
      "patch",
      "/projects/{project}",
      api.patch(`/api/v1/projects/${name}`, {}),
    );
    await expectDocumented(
      "get",
      "/projects/{project}/probes/{probeId}",
      api.get(`/api/v1/projects/${name}/probes/0123456789abcdef`),
    );
    await expectDocumented(
      "post",
      "/settings/iam-alive/test",
      api.post("/api/v1/settings/iam-alive/test", { x: 1 }),
    );
  } finally {
    await app.close();
  }
});
