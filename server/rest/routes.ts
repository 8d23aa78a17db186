/**
 * The REST routing table, built once at start from the generated OpenAPI document: for each
 * operation its method, path template, path and query parameters, whether it reads a body, its
 * success statuses, and the procedure it calls (the `operationId`, which trpc-to-openapi derives
 * from the procedure's path with `-` for `.`). What the document says is what is routed.
 *
 * @module
 */
import type { OpenAPIObject } from "trpc-to-openapi";
import { procedurePathOf } from "../trpc/caller.ts";
import { isPagedList } from "../trpc/pages.ts";

export interface Route {
  method: string;
  /** The path template, such as `/projects/{project}`. */
  template: string;
  /** The procedure's path in the router, such as `["projects", "get"]`. */
  procedure: string[];
  pathParams: string[];
  queryParams: string[];
  /** Whether the operation takes a JSON body, and whether it must be sent. */
  body: "none" | "optional" | "required";
  /** A list answered whole by streaming its pages when no `limit` is asked for. */
  paged: boolean;
  /** The statuses a success may answer with, ascending; a procedure with several chooses. */
  success: number[];
  pattern: RegExp;
}

export interface Match {
  route: Route;
  /** The path parameters, as they appear in the path. */
  params: Record<string, string>;
}

interface DocumentOperation {
  operationId?: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { required?: boolean };
  responses?: Record<string, unknown>;
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** trpc-to-openapi's matcher: `{name}` is one segment, and the path is matched without case. */
function patternOf(template: string): RegExp {
  const source = template.replace(/\{(.+?)\}/g, (_, key) => `(?<${key}>[^/]+)`);
  return new RegExp(`^${source}$`, "i");
}

/** The routes of a document, by method. */
export function routesOf(document: OpenAPIObject): Map<string, Route[]> {
  const byMethod = new Map<string, Route[]>();
  for (const [template, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (item as Record<string, DocumentOperation | undefined>)[method];
      if (!operation?.operationId) continue;
      const parameters = operation.parameters ?? [];
      const queryParams = parameters.filter((p) => p.in === "query").map((p) => p.name);
      const success = Object.keys(operation.responses ?? {}).map(Number)
        .filter((status) => status >= 200 && status < 300).sort((a, b) => a - b);
      const route: Route = {
        method: method.toUpperCase(),
        template,
        procedure: procedurePathOf(operation.operationId),
        pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name),
        queryParams,
        body: !operation.requestBody
          ? "none"
          : operation.requestBody.required
          ? "required"
          : "optional",
        paged: isPagedList(method, queryParams),
        success,
        pattern: patternOf(template),
      };
      const list = byMethod.get(route.method) ?? [];
      list.push(route);
      byMethod.set(route.method, list);
    }
  }
  return byMethod;
}

/** Finds the route for a method and a path below the REST prefix (such as `/projects/a`). */
export function matchRoute(
  routes: Map<string, Route[]>,
  method: string,
  path: string,
): Match | null {
  const normalized = `/${path.replace(/^\/|\/$/g, "")}`;
  for (const route of routes.get(method) ?? []) {
    const found = route.pattern.exec(normalized);
    if (found) return { route, params: { ...found.groups } };
  }
  return null;
}
