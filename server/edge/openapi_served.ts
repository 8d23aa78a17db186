/**
 * The OpenAPI document the service serves at `/api/v1/openapi.json`, as `deno task
 * openapi:generate` wrote it from the procedures (`openapi.ts` builds it); a test fails when the
 * file no longer matches them. Read from the file rather than built at start, so that the running
 * service never loads trpc-to-openapi.
 *
 * @module
 */
import type { OpenAPIObject } from "trpc-to-openapi";

const FILE = new URL("./openapi.gen.json", import.meta.url);

let read: OpenAPIObject | undefined;

/**
 * The generated document, read from its file once per process (900 KB of JSON: tests build
 * hundreds of apps). Shared by every caller, so none may change it.
 */
export function readOpenApiDocument(): OpenAPIObject {
  return read ??= JSON.parse(Deno.readTextFileSync(FILE));
}
