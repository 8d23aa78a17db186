/**
 * Reaching a procedure by its path through tRPC's public caller, for the REST dispatcher and
 * the `/trpc` fast path alike: `caller.projects.get(input)` for the path `["projects", "get"]`.
 *
 * @module
 */
import type { Context } from "./context.ts";
import { createCallerFactory } from "./init.ts";
import type { AppRouter } from "./router.ts";

/** The procedure path an OpenAPI `operationId` names (trpc-to-openapi writes `.` as `-`). */
export function procedurePathOf(operationId: string): string[] {
  return operationId.split("-");
}

/** Calls the procedure at `path` with `ctx` and `input`; rejects as the procedure does. */
export function createProcedureCaller(
  router: AppRouter,
): (ctx: Context, path: readonly string[], input: unknown) => Promise<unknown> {
  const createCaller = createCallerFactory(router);
  return (ctx, path, input) => {
    let procedure: unknown = createCaller(ctx);
    for (const segment of path) procedure = (procedure as Record<string, unknown>)[segment];
    return (procedure as (input: unknown) => Promise<unknown>)(input);
  };
}
