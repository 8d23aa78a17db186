/**
 * The REST routes, built once at start from the procedures' meta (`operationsOf` in
 * `server/procedures/operations.ts`): for each operation its method, path template, the path in
 * the form the edge's Hono router registers (`/projects/:project`), path and query parameters,
 * whether it reads a body, its success statuses, and the procedure it calls. The router
 * (`server/edge/router.ts`) is the one dispatcher; the OpenAPI document is generated from the same
 * meta (`routes_test.ts` checks the two agree).
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
  /**
   * The path as the router registers it, lower case (`routingPath` in `router.ts`), with
   * `:name` for each parameter: `/projects/:project`.
   */
  pattern: string;
}

/** A path parameter's name, from its segment of a template (`{project}`). */
const paramName = (segment: string) => /^\{(.+)\}$/.exec(segment)?.[1];

/** The routes of a router's REST operations (`operationsOf`), by method. */
export function routesOf(operations: readonly Operation[]): Map<string, Route[]> {
  const byMethod = new Map<string, Route[]>();
  for (const operation of operations) {
    const { method, template, procedure, pathParams, queryParams, body, paged, success } =
      operation;
    const parts = template.split("/");
    const names = parts.map(paramName);
    const route: Route = {
      method,
      template,
      procedure,
      pathParams,
      queryParams,
      body,
      paged,
      success,
      pattern: parts.map((part, i) => names[i] ? `:${names[i]}` : part.toLowerCase()).join("/"),
    };
    const list = byMethod.get(method) ?? [];
    list.push(route);
    byMethod.set(method, list);
  }
  return byMethod;
}

/**
 * Reads a routed request's path parameters from its path below the REST prefix (such as
 * `/projects/a%2Fb`) as they appear there: still percent-encoded, so that an encoded name names
 * nothing.
 */
export function paramsReader(route: Route): (path: string) => Record<string, string> {
  const segments = route.template.split("/").flatMap((segment, index) => {
    const name = paramName(segment);
    return name ? [[name, index] as const] : [];
  });
  return (path) => {
    const parts = path.split("/");
    const params: Record<string, string> = {};
    for (const [name, index] of segments) params[name] = parts[index];
    return params;
  };
}
