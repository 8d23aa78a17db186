/**
 * Test support: what an OpenAPI document names, for the tests that walk the document (the
 * server learns the same from the procedures themselves: `server/procedures/operations.ts`).
 *
 * @module
 */
import type { OpenAPIObject } from "trpc-to-openapi";
import { procedurePathOf } from "../procedures/caller.ts";

/** The procedures an OpenAPI document names, by path, with whether each is a query (a GET). */
export function procedureTypes(document: OpenAPIObject): Map<string, "query" | "mutation"> {
  const types = new Map<string, "query" | "mutation">();
  for (const item of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, unknown>)) {
      const id = (operation as { operationId?: string }).operationId;
      if (id) types.set(procedurePathOf(id).join("."), method === "get" ? "query" : "mutation");
    }
  }
  return types;
}

const METHODS = ["get", "put", "post", "delete", "patch"];

/** One operation of the served document. */
export interface DocumentOperation {
  /** `GET`, `POST`, ... */
  method: string;
  /** The path's template, such as `/projects/{project}`. */
  template: string;
  /** `METHOD template`, such as `GET /projects/{project}`. */
  op: string;
  /** The tRPC procedure path, such as `projects.get`. */
  procedure: string;
}

/** Every operation of an OpenAPI document, in its order. */
export function operationsOf(document: OpenAPIObject): DocumentOperation[] {
  return Object.entries(document.paths ?? {}).flatMap(([template, item]) =>
    Object.entries(item as Record<string, { operationId?: string }>)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        op: `${method.toUpperCase()} ${template}`,
        procedure: procedurePathOf(operation.operationId ?? "").join("."),
      }))
  );
}

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/**
 * An answer as the tests that compare two callers' answers see it: its status and its body,
 * with the timestamps that follow the clock (`generated_at`, a window's `since` and `until`)
 * blanked.
 */
export const comparable = (answer: { status: number; text: string }) => ({
  status: answer.status,
  body: JSON.parse(
    answer.text || "null",
    (_, v) => typeof v === "string" && TIMESTAMP.test(v) ? "<time>" : v,
  ),
});

/**
 * Bodies that would change something if they were let through, by `METHOD template`
 * (`project` where a body names one); `{}` for the others.
 */
export function changingBody(op: string, project: string, unique: (prefix: string) => string) {
  const bodies: Record<string, Record<string, unknown>> = {
    "POST /projects": { project: unique("new") },
    "PATCH /projects/{project}": { label: "Changed" },
    "POST /projects/{project}/probes": { url: "http://127.0.0.1:9/new" },
    "POST /probes": { project, url: "http://127.0.0.1:9/other" },
    "PATCH /projects/{project}/probes/{probeId}": { latency: 9 },
    "PATCH /settings/iam-alive": { enabled: true, interval_hours: 2 },
    "PATCH /settings/alerts": { failure_threshold: 4 },
    "PATCH /projects/{project}/alerts": { reminder_minutes: 30 },
    "POST /projects/{project}/maintenance": {
      starts_at: "2032-01-01T00:00:00Z",
      ends_at: "2032-01-02T00:00:00Z",
    },
    "PATCH /projects/{project}/status-page": { public: true, title: "Changed" },
    "POST /projects/{project}/heartbeats": { name: "hb-new", period_seconds: 3600 },
    "PATCH /projects/{project}/heartbeats/{name}": { grace_seconds: 120 },
    "POST /notification-targets": { name: unique("t"), kind: "log" },
    "PATCH /notification-targets/{name}": { recipients: ["b@example.com"] },
    "POST /locations": { name: unique("l") },
    "PATCH /locations/{location}": { label: "Changed" },
  };
  return bodies[op] ?? {};
}
