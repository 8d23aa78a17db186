import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { toApiError, trpcErrorShape } from "../errors.ts";
import type { Context } from "./context.ts";

/** What a procedure's meta says besides trpc-to-openapi's `openapi` block. */
export interface ServiceMeta extends Record<string, unknown> {
  /**
   * The operation's success answers on REST, by status, with their descriptions; `{ 200 }` when
   * absent. A procedure that declares more than one chooses with `ctx.res.status`; 204 answers
   * without a body.
   */
  success?: Record<number, string>;
}

export type Meta = OpenApiMeta<ServiceMeta>;

const t = initTRPC.context<Context>().meta<Meta>().create({
  // tRPC callers get the REST error body under `data.error` (see `server/errors.ts`).
  errorFormatter: ({ error }) => trpcErrorShape(toApiError(error)),
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Every operation of the service. The API key is required by the context (see `context.ts`);
 * a read-only key's mutations are refused here, in the one place both `/api/v1` and `/trpc`
 * pass through (403 `forbidden`); errors are mapped to their codes by the formatter above.
 */
export const apiProcedure = t.procedure.use(({ ctx, type, next }) => {
  if (type === "mutation" && ctx.scope !== "write") throw new TRPCError({ code: "FORBIDDEN" });
  return next();
});
