/**
 * Builds the REST operations of a router from its procedures themselves: each procedure's meta
 * says its method and path (`openapi`), its success statuses (`success`) and whether its list is
 * paged (`paged`); its type (query or mutation) and its input's fields come from the procedure.
 * `deno task openapi:generate` writes the list to `operations.gen.json`, which the server loads
 * (`operations.ts`), and trpc-to-openapi builds the document from the same meta.
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
  type OpenApiProcedure,
  type OpenApiProcedureRecord,
  unwrapZodType,
} from "trpc-to-openapi";
import type { Meta } from "./init.ts";
import type { Operation } from "./operations.ts";

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
