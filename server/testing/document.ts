/**
 * Test support: what an OpenAPI document names, for the tests that walk the document (the
 * server learns the same from the procedures themselves: `server/trpc/operations.ts`).
 *
 * @module
 */
import type { OpenAPIObject } from "trpc-to-openapi";
import { procedurePathOf } from "../trpc/caller.ts";

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
