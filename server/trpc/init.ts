import { initTRPC, TRPCError } from "@trpc/server";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import type { OpenApiMeta } from "trpc-to-openapi";
import { toApiError, toTRPCError } from "../errors.ts";
import type { Context } from "./context.ts";

const t = initTRPC.context<Context>().meta<OpenApiMeta>().create({
  // tRPC callers get the same error body as REST callers, under `data.error`.
  errorFormatter: ({ shape, error }) => {
    const { status, body } = toApiError(error);
    const mapped = toTRPCError(error);
    return {
      message: body.error.message,
      code: mapped instanceof TRPCError ? TRPC_ERROR_CODES_BY_KEY[mapped.code] : shape.code,
      data: { httpStatus: status, error: body.error },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Every operation of the service. Errors are mapped to their tRPC codes in one place,
 * `errors.ts`, from the formatter above and the REST bridge's error hook; the API key is
 * required by the context (see `context.ts`). No middleware: tRPC copies its call options at
 * every middleware level, and on a read that copying was a fifth of the CPU.
 */
export const apiProcedure = t.procedure;
