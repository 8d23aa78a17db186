/**
 * The REST routing table, built once at start from the procedures' meta (`operationsOf` in
 * `server/procedures/operations.ts`): for each operation its method, path template, path and query
 * parameters, whether it reads a body, its success statuses, and the procedure it calls. The
 * OpenAPI document is generated from the same meta (`routes_test.ts` checks the two agree).
 *
 * @module
 */
import type { Operation } from "../../procedures/operations.ts";

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

/** trpc-to-openapi's matcher: `{name}` is one segment, and the path is matched without case. */
function patternOf(template: string): RegExp {
  const source = template.replace(/\{(.+?)\}/g, (_, key) => `(?<${key}>[^/]+)`);
  return new RegExp(`^${source}$`, "i");
}

/** The routes of a router's REST operations (`operationsOf`), by method. */
export function routesOf(operations: readonly Operation[]): Map<string, Route[]> {
  const byMethod = new Map<string, Route[]>();
  for (const operation of operations) {
    const { method, template, procedure, pathParams, queryParams, body, paged, success } =
      operation;
    const route: Route = {
      method,
      template,
      procedure,
      pathParams,
      queryParams,
      body,
      paged,
      success,
      pattern: patternOf(template),
    };
    const list = byMethod.get(method) ?? [];
    list.push(route);
    byMethod.set(method, list);
  }
  return byMethod;
}

/**
 * Finds the route for a method and a path below the REST prefix (such as `/projects/a`); a HEAD
 * finds its GET route (`server/edge/methods.ts`).
 */
export function matchRoute(
  routes: Map<string, Route[]>,
  method: string,
  path: string,
): Match | null {
  const normalized = `/${path.replace(/^\/|\/$/g, "")}`;
  for (const route of routes.get(method === "HEAD" ? "GET" : method) ?? []) {
    const found = route.pattern.exec(normalized);
    if (found) return { route, params: { ...found.groups } };
  }
  return null;
}
