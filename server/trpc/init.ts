import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { toApiError, toTRPCError } from "../errors.ts";
import type { Context } from "./context.ts";

const t = initTRPC.context<Context>().meta<OpenApiMeta>().create({
  // tRPC callers get the same error body as REST callers, under `data.error`.
  errorFormatter: ({ shape, error }) => {
    const { status, body } = toApiError(error);
    return {
      message: body.error.message,
      code: shape.code,
      data: { httpStatus: status, error: body.error },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Requires the API key, and turns domain errors (and zod input failures) into the tRPC errors
 * they stand for. One middleware rather than two: tRPC copies its call options at every level.
 */
const guard = t.middleware(async ({ ctx, next }) => {
  if (!ctx.authenticated) throw new TRPCError({ code: "UNAUTHORIZED" });
  const result = await next();
  if (!result.ok) throw toTRPCError(result.error);
  return result;
});

/** Every operation of the service: authenticated, with errors mapped in one place. */
export const apiProcedure = t.procedure.use(guard);
