/**
 * The REST operations of the service's router: for each procedure its method, path template,
 * parameters, body and success statuses. The REST routes (`server/edge/rest/routes.ts`), the
 * `/trpc` fast path, the route labels of the metrics and the OpenAPI document's completion are
 * all built from this list.
 *
 * The list is built from the procedures' meta by `operations_build.ts`, through trpc-to-openapi's
 * helpers, and written to `operations.gen.json` by `deno task openapi:generate`; a test fails when
 * the file no longer matches the procedures. The server loads the file instead of building the
 * list, so that trpc-to-openapi (and the HTTP adapters its module loads with it) is never loaded
 * by the running service: that took some 10 MiB of its heap and 17 MiB of its resident memory.
 *
 * @module
 */
import type { OpenApiMethod } from "trpc-to-openapi";
import type { Meta } from "./init.ts";
import generated from "./operations.gen.json" with { type: "json" };

export interface Operation {
  /** The HTTP method, upper case. */
  method: OpenApiMethod;
  /** The path template below the REST prefix, such as `/projects/{project}`. */
  template: string;
  /** The procedure's path in the router, such as `["projects", "get"]`. */
  procedure: string[];
  type: "query" | "mutation";
  pathParams: string[];
  queryParams: string[];
  /** Whether the operation takes a JSON body, and whether it must be sent. */
  body: "none" | "optional" | "required";
  /** A list answered whole by streaming its pages when no `limit` is asked for. */
  paged: boolean;
  /** The statuses a success may answer with, ascending; a procedure with several chooses. */
  success: number[];
  /** The procedure's whole meta (for the document: `openapi.errorResponses`, `success`). */
  meta: Meta;
}

/** The operations of the service's router (`appRouter`), in the router's order. */
export const OPERATIONS: readonly Operation[] = generated as Operation[];
