/**
 * The REST operations of a router, from its procedures themselves: each procedure's meta says
 * its method and path (`openapi`), its success statuses (`success`) and whether its list is paged
 * (`paged`); its type (query or mutation) and its input's fields come from the procedure. The REST
 * routes (`server/edge/rest/routes.ts`), the `/trpc` fast path, the route labels of the metrics and the
 * OpenAPI document's completion (`server/edge/openapi.ts`) are all built from this list, once at
 * start; trpc-to-openapi builds the document from the same meta. Nothing reads the document back.
 *
 * The procedures are found through the router's public record (`appRouter.projects.get`) and
 * read through trpc-to-openapi's public helpers, so the parameters follow the generator's rules:
 * a GET or DELETE takes the input's other fields as query parameters, any other method a JSON
 * body; a POST whose only input is its path takes no body or `{}`.
 *
 * @module
 */
import {
  acceptsRequestBody,
  forEachOpenApiProcedure,
  getInputOutputParsers,
  getPathParameters,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  normalizePath,
  type OpenApiMethod,
  type OpenApiProcedure,
  type OpenApiProcedureRecord,
  unwrapZodType,
} from "trpc-to-openapi";
import type { Meta } from "./init.ts";

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

/** Names a router keeps beside its procedures (tRPC's own, not procedures). */
const ROUTER_OWN = new Set(["_def", "createCaller"]);

/** The router's procedures by path (`projects.get`), from its public record. */
function proceduresOf(record: object, prefix = ""): OpenApiProcedureRecord {
  const found: OpenApiProcedureRecord = {};
  for (const [key, item] of Object.entries(record)) {
    if (prefix === "" && ROUTER_OWN.has(key)) continue;
    const path = prefix + key;
    if (typeof item === "function") found[path] = item as OpenApiProcedure;
    else if (typeof item === "object" && item !== null) {
      Object.assign(found, proceduresOf(item, `${path}.`));
    }
  }
  return found;
}

/** The input's field names, as the generator reads them (none for a void-like input). */
function inputFields(procedure: OpenApiProcedure, hasPathParams: boolean): string[] {
  const { inputParser, hasInputsDefined } = getInputOutputParsers(procedure);
  if (!hasInputsDefined) return [];
  const schema = unwrapZodType(inputParser, true);
  if (!hasPathParams && instanceofZodTypeLikeVoid(schema)) return [];
  if (!instanceofZodTypeObject(schema)) throw new Error("An input must be an object");
  return Object.keys(schema.shape);
}

/** The REST operations of `router`, in the router's order. */
export function operationsOf(router: object): Operation[] {
  const operations: Operation[] = [];
  forEachOpenApiProcedure<Meta>(proceduresOf(router), ({ path, type, procedure, meta }) => {
    if (type === "subscription") return;
    const method = meta.openapi.method;
    const template = normalizePath(meta.openapi.path);
    const pathParams = getPathParameters(template);
    const fields = inputFields(procedure, pathParams.length > 0);
    const others = fields.filter((field) => !pathParams.includes(field));
    const { inputParser } = getInputOutputParsers(procedure);
    const required = !inputParser.safeParse(undefined).success;
    let body: Operation["body"] = "none";
    if (acceptsRequestBody(method)) {
      const bodyless = fields.length === 0 || (pathParams.length > 0 && others.length === 0);
      // A POST without body fields takes no body or `{}` (the document says so: `openapi.ts`).
      body = bodyless
        ? (method === "POST" ? "optional" : "none")
        : required
        ? "required"
        : "optional";
    }
    operations.push({
      method,
      template,
      procedure: path.split("."),
      type,
      pathParams,
      queryParams: acceptsRequestBody(method) ? [] : others,
      body,
      paged: meta.paged === true,
      success: Object.keys(meta.success ?? { 200: "" }).map(Number).sort((a, b) => a - b),
      meta,
    });
  });
  return operations;
}
