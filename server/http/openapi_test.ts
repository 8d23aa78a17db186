import assert from "node:assert/strict";
import { compileErrors, validate } from "@readme/openapi-parser";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { startTestApp, TestClient } from "../testing/app.ts";

/** Every operation of the service, with the statuses it answers (body ops add 400/413/415). */
const SPEC: Record<string, number[]> = {
  "POST /projects": [201, 401, 409, 422],
  "GET /projects": [200, 401],
  "GET /projects/{project}": [200, 401, 404],
  "PATCH /projects/{project}": [200, 401, 404, 422],
  "DELETE /projects/{project}": [200, 401, 404, 500],
  "POST /projects/{project}/probes": [200, 201, 401, 404, 422],
  "POST /probes": [200, 201, 401, 404, 422],
  "GET /probes": [200, 401],
  "GET /projects/{project}/probes": [200, 401],
  "GET /projects/{project}/probes/{probeId}": [200, 401, 404],
  "PATCH /projects/{project}/probes/{probeId}": [200, 401, 404, 422],
  "DELETE /projects/{project}/probes/{probeId}": [204, 401, 404],
  "GET /settings/iam-alive": [200, 401],
  "PATCH /settings/iam-alive": [200, 401, 422],
  // Beyond the interface document: the I'm alive reports (README "I'm alive reports").
  "POST /settings/iam-alive/test": [200, 401, 503],
  "GET /settings/iam-alive/deliveries": [200, 401, 422],
  // Beyond the interface document: the probe runner's results (README "Probe runner").
  "GET /projects/{project}/probes/{probeId}/results": [200, 401, 404, 422],
  "GET /projects/{project}/probes/{probeId}/stats": [200, 401, 404, 422],
  "GET /projects/{project}/status": [200, 401, 404],
};

/** The operations whose answers carry `meta` besides `data`. */
const WITH_META = new Set([
  "GET /projects",
  "DELETE /projects/{project}",
  "POST /projects/{project}/probes",
  "POST /probes",
  "GET /probes",
  "GET /projects/{project}/probes",
  "GET /settings/iam-alive/deliveries",
  "GET /projects/{project}/probes/{probeId}/results",
  "GET /projects/{project}/status",
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
      const body = op.requestBody ? [400, 413, 415] : [];
      const expected = [...new Set([...SPEC[key], ...body, 500])].sort((a, b) => a - b);
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
        assert.equal(typeof media.example.error.code, "string");
      }
    }
  });

  await t.step("declares the X-Service-Api-Key scheme and requires it everywhere", () => {
    assert.deepEqual(doc.components.securitySchemes.ApiKey, {
      type: "apiKey",
      in: "header",
      name: "X-Service-Api-Key",
      description: "The service's API key (SERVICE_API_KEY).",
    });
    for (const [key, op] of operations(doc)) {
      assert.deepEqual(op.security, [{ ApiKey: [] }], key);
    }
  });

  await t.step("gives every operation a summary, a tag and an operationId", () => {
    const tags = new Set(doc.tags.map((tag: Json) => tag.name));
    for (const [key, op] of operations(doc)) {
      assert.ok(op.summary, `${key} summary`);
      assert.equal(op.tags.length, 1, `${key} tags`);
      assert.ok(tags.has(op.tags[0]), `${key} tag ${op.tags[0]} is declared`);
      assert.match(op.operationId, /^[a-z]+-[A-Za-z]+$/);
    }
  });
});
