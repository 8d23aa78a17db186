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

/** The generated document, read from its file. */
export function readOpenApiDocument(): OpenAPIObject {
  return JSON.parse(Deno.readTextFileSync(FILE));
}
