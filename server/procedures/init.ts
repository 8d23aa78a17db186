import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { AnswerTooLargeError, ERRORS, toApiError, trpcErrorShape } from "./errors.ts";
import { DomainError } from "../domain/errors.ts";
import { isDatabaseUnavailable } from "../storage/unavailable.ts";
import { boundedStringify } from "./answer_size.ts";
import type { Context } from "./context.ts";
import { enforceRole } from "./access.ts";
import { refuseOutOfScope, scopedInput, scopeRefusal } from "./scope.ts";

/** What a procedure's meta says besides trpc-to-openapi's `openapi` block. */
export interface ServiceMeta extends Record<string, unknown> {
  /**
   * The operation's success answers on REST, by status, with their descriptions; `{ 200 }` when
   * absent. A procedure that declares more than one chooses with `ctx.res.status`; 204 answers
   * without a body.
   */
  success?: Record<number, string>;
  /**
   * A list paged by `limit` and `after` (`meta.next_after`): answered whole, by streaming its
   * pages, when no `limit` is asked for (`server/procedures/pages.ts`), on REST and a single `/trpc`
   * call alike.
   */
  paged?: true;
}

export type Meta = OpenApiMeta<ServiceMeta>;

const t = initTRPC.context<Context>().meta<Meta>().create({
  // tRPC callers get the REST error body under `data.error` (see `server/procedures/errors.ts`).
  errorFormatter: ({ error }) => trpcErrorShape(toApiError(error)),
});

export const router = t.router;

const outOfScope = () => new DomainError("out_of_scope", ERRORS.out_of_scope.message);

/**
 * The runner protocol's operations (docs/locations.md): callable with a location token only,
 * for its own location (`ctx.location`); every key is refused (403 `out_of_scope`).
 */
export const runnerProcedure = t.procedure.use(({ ctx, next }) => {
  if (ctx.scope !== "location" || ctx.location === undefined) throw outOfScope();
  return next({ ctx: { ...ctx, location: ctx.location } });
});
export const createCallerFactory = t.createCallerFactory;

/**
 * A mutation with its audit entry, in one transaction that the procedure gets as its `ctx.db`
 * (`audit.ts`). Every mutation of `apiProcedure` uses it right after its `.input()`: after every
 * refusal (a refused write leaves no entry), and on the input as validated (the entry names
 * nothing from input the procedure refuses).
 */
export const audited = t.middleware(({ ctx, type, path, input, next }) => {
  if (type !== "mutation" || !ctx.audit) return next();
  return ctx.audit.run({ ctx, path, input, next: (db) => next({ ctx: { db } }) });
});

/**
 * Every operation of the service. The API key is required by the context (see `context.ts`);
 * a call the caller's role may not make (`access.ts`: a viewer's mutations, an editor's
 * administration) is refused here, in the one place both `/api/v1` and `/trpc` pass through
 * (403 `forbidden`); errors are mapped to their codes by the formatter above.
 */
export const apiProcedure = t.procedure.use(({ ctx, type, path, getRawInput, next: go }) => {
  if (ctx.scope === "location") throw outOfScope();
  enforceRole(ctx.principal, path, type);
  // A principal limited to projects (`scope.ts`): a call it may not make is refused; a project
  // it does not see is named, when the input is read, as one that does not exist. For any other
  // principal, nothing.
  const projects = ctx.principal.projects;
  if (projects !== null) {
    const refusal = scopeRefusal(path, type);
    if (refusal !== null) refuseOutOfScope(refusal);
  }
  const next = projects === null
    ? go
    : () => go({ getRawInput: async () => scopedInput(projects, await getRawInput()) });
  // A batch's queries are counted against its answer budget as each resolves, so a batch of lists
  // is never built whole; the HTTP layer answers the whole batch 413 when one does not fit.
  // Mutations are never refused after the fact: their answers are bounded by their input.
  const budget = ctx.answerBudget;
  if (!budget || type !== "query") return next();
  return budget.run(next, (result) => {
    if (!result.ok) {
      // A list that stopped reading past the budget: the batch is answered 413 as a whole.
      if (result.error.cause instanceof AnswerTooLargeError) return null;
      if (isDatabaseUnavailable(result.error.cause)) budget.unavailable = result.error;
      return 0;
    }
    const text = boundedStringify(result.data, budget.remaining);
    return text === null ? null : text?.length ?? 0;
  });
});
