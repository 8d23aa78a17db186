import assert from "node:assert/strict";
import { REST_PREFIX } from "../handler.ts";
import { buildOpenApiDocument } from "../openapi.ts";
import { apiSuite, uniqueName } from "../../testing/app.ts";
import { appRouter } from "../../procedures/router.ts";
import { operationsOf } from "../../procedures/operations_build.ts";
import { routesOf } from "./routes.ts";

const DOCUMENT = buildOpenApiDocument(appRouter, REST_PREFIX);
const ROUTES = [...routesOf(operationsOf(appRouter)).values()].flat();

// deno-lint-ignore no-explicit-any
type Json = any;

/** The body fields of an operation whose schema says number, integer or boolean. */
function scalarFields(template: string, method: string): [string, string][] {
  const schema = (DOCUMENT.paths?.[template] as Json)?.[method.toLowerCase()]?.requestBody
    ?.content["application/json"].schema;
  const types = (field: Json): string[] =>
    field.anyOf ? field.anyOf.flatMap(types) : [field.type].flat().filter(Boolean);
  return Object.entries(schema?.properties ?? {}).flatMap(([name, field]) =>
    types(field).filter((t) => ["number", "integer", "boolean"].includes(t)).map((t) =>
      [name, t] as [string, string]
    )
  );
}

const fill = (template: string, values: Record<string, string>) =>
  template.replace(/\{(.+?)\}/g, (_, name) => values[name] ?? "x");

interface DocumentOperation {
  operationId?: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { required?: boolean };
  responses?: Record<string, unknown>;
}

/** What the document says of each operation, in the routes' terms. */
function documentedRoutes() {
  return Object.entries(DOCUMENT.paths ?? {}).flatMap(([template, item]) =>
    Object.entries(item as Record<string, DocumentOperation>).map(([method, operation]) => {
      const parameters = operation.parameters ?? [];
      return {
        method: method.toUpperCase(),
        template,
        procedure: operation.operationId?.split("-"),
        pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === "query").map((p) => p.name),
        body: !operation.requestBody
          ? "none"
          : operation.requestBody.required
          ? "required"
          : "optional",
        success: Object.keys(operation.responses ?? {}).map(Number)
          .filter((status) => status >= 200 && status < 300).sort((a, b) => a - b),
      };
    })
  );
}

Deno.test("the routes, built from the procedures' meta, are the operations of the document", () => {
  const routes = ROUTES.map(({ pattern: _, paged: __, ...route }) => route);
  const key = (r: { method: string; template: string }) => `${r.method} ${r.template}`;
  const sorted = <T extends { method: string; template: string }>(list: T[]) =>
    [...list].sort((a, b) => key(a).localeCompare(key(b)));
  assert.deepEqual(sorted(routes), sorted(documentedRoutes()));
  // Paged lists say so in their meta, and take the paging parameters.
  const paged = ROUTES.filter((r) => r.paged).map(key).sort();
  assert.deepEqual(paged, [
    "GET /audit-log",
    "GET /probes",
    "GET /projects",
    "GET /projects/{project}/heartbeats",
    "GET /projects/{project}/probes",
  ]);
  for (const route of ROUTES.filter((r) => r.method === "GET")) {
    const pages = route.queryParams.includes("limit") && route.queryParams.includes("after");
    assert.equal(
      route.paged,
      pages,
      `${key(route)}: paged in its meta iff it takes limit and after`,
    );
  }
});

apiSuite("REST routing", (test) => {
  test("every operation of the document reaches its procedure", async ({ api }) => {
    assert.equal(ROUTES.length, 69);
    const reached = new Set<number>();
    for (const route of ROUTES) {
      const path = `/api/v1${fill(route.template, {})}`;
      const res = await api.call(route.method, path, route.body === "none" ? {} : { body: {} });
      const what = `${route.method} ${path}: ${res.status} ${JSON.stringify(res.body)}`;
      // Reached: the procedure answered (a success, or its own refusal of the input or of the
      // project "x"), not the router's 404 and not a failure of the dispatch itself (500).
      assert.notEqual(res.body?.error?.message, "No such route", what);
      assert.ok(res.status < 500, what);
      reached.add(res.status);
    }
    // Both procedures' own answers happen: validation (422) and the unknown project "x" (404).
    assert.ok(reached.has(422) && reached.has(404), [...reached].join(","));
  });

  test("no body value is coerced: strings for numbers and booleans answer 422 on every operation", async ({ api }) => {
    const project = uniqueName();
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    // The runner protocol answers a location's token only (any API key: 403).
    const location = await api.post("/api/v1/locations", { name: uniqueName() });
    assert.equal(location.status, 201, location.text);
    const keyOf = (template: string) =>
      template.startsWith("/runner/") ? location.body.data.token : undefined;
    let checked = 0;
    for (const route of ROUTES.filter((r) => r.body !== "none")) {
      for (const [field, type] of scalarFields(route.template, route.method)) {
        const sent = type === "boolean" ? "false" : "100";
        const path = `/api/v1${fill(route.template, { project })}`;
        const res = await api.call(route.method, path, {
          body: { [field]: sent },
          key: keyOf(route.template),
        });
        assert.equal(res.status, 422, `${route.method} ${route.template} ${field}: "${sent}"`);
        assert.ok(
          res.body.error.details.some((d: Json) => d.path === field),
          `${route.method} ${route.template} names ${field}`,
        );
        checked++;
      }
    }
    // latency (probes: two creates and the PATCH), enabled and interval_hours (settings).
    assert.ok(checked >= 5, `checked ${checked} fields`);
  });

  test("an unknown method on a known path is 404, before any body is read", async ({ api }) => {
    for (const method of ["PUT", "POST", "DELETE"]) {
      const res = await api.call(method, "/api/v1/projects/x/probes/y/results");
      assert.equal(res.status, 404, method);
      assert.equal(res.body.error.code, "not_found");
    }
    const put = await api.call("PUT", "/api/v1/projects", { raw: "not json" });
    assert.equal(put.status, 404);
  });

  test("an action without input takes no body or {}, and refuses anything else", async ({ api }) => {
    const path = "/api/v1/settings/iam-alive/test";
    assert.equal((await api.call("POST", path)).status, 200);
    assert.equal((await api.post(path, {})).status, 200);
    const extra = await api.post(path, { x: 1 });
    assert.equal(extra.status, 422);
    assert.equal(extra.body.error.details[0].path, "x");
  });

  test("query parameters the document does not name are ignored", async ({ api }) => {
    const project = uniqueName();
    await api.post("/api/v1/projects", { project });
    const res = await api.get(`/api/v1/projects?project=${project}&unknown=1`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data.map((p: Json) => p.project), [project]);
  });

  test("a body may not name a path parameter again", async ({ api }) => {
    const project = uniqueName();
    await api.post("/api/v1/projects", { project });
    const res = await api.patch(`/api/v1/projects/${project}`, { project: "other", label: "x" });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.details[0].path, "project");
  });
});
