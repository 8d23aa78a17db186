/**
 * The OpenAPI document the service serves at `/api/v1/openapi.json`, as `deno task
 * openapi:generate` wrote it from the procedures (`openapi.ts` builds it); a test fails when the
 * file no longer matches them. Read from the file rather than built at start, so that the running
 * service never loads trpc-to-openapi.
 *
 * @module
 */
import { serverFile } from "../base/files.ts";

const FILE = serverFile("edge/openapi.gen.json");

let served: Uint8Array | undefined;

/**
 * The generated document as it is served: compact JSON in UTF-8, read once per process and
 * shared by every app (tests build hundreds), so none may change it. Only these bytes are kept:
 * the parsed document and its text as a string took 1.5 MiB of the server's heap, these bytes
 * 0.35 MiB outside it.
 */
export function readOpenApiJson(): Uint8Array {
  served ??= new TextEncoder().encode(JSON.stringify(JSON.parse(Deno.readTextFileSync(FILE))));
  return served;
}
