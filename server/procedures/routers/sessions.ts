import { countMeta, dataWithMeta, session, sessionListInput, sessionRef } from "@probe/shared";
import { z } from "zod";
import { DomainError } from "../../domain/errors.ts";
import type { Principal } from "../../domain/principal.ts";
import { keySessionName, type Sessions } from "../../domain/access/sessions.ts";
import type { Context } from "../context.ts";
import { apiProcedure, audited, router } from "../init.ts";

const tags = ["sessions"];
const NOT_FOUND = "Session not found";

/**
 * The name the caller's own sessions go by: a session's own name, or `key NAME` for the key
 * (whose sessions those are).
 */
function ownName(principal: Principal): string {
  return principal.source === "session" ? principal.name : keySessionName(principal.name);
}

function sessionsOf(ctx: Context): Sessions {
  if (!ctx.sessions) throw new DomainError("not_found", NOT_FOUND);
  return ctx.sessions;
}

/**
 * Whether `principal` sees and ends everyone's sessions: an admin of every project (one limited
 * to projects would learn every user's name).
 */
const seesAllSessions = (principal: Principal) =>
  principal.role === "admin" && principal.projects === null;

/** Dashboard sessions: an admin sees and ends everyone's, others their own only. */
export const sessionsRouter = router({
  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/sessions",
        tags,
        summary: "List dashboard sessions",
        description: "The dashboard sessions not yet ended, newest first: an admin's call " +
          "lists everyone's (`name` filters by who), any other the caller's own (those of its " +
          "key, `key NAME`, or its own user). Tokens are never shown.",
        protect: true,
      },
    })
    .input(sessionListInput)
    .output(dataWithMeta(z.array(session), countMeta))
    .query(async ({ ctx, input }) => {
      const admin = seesAllSessions(ctx.principal);
      const name = admin ? input.name : ownName(ctx.principal);
      const data = await sessionsOf(ctx).list(name === undefined ? {} : { name }, ctx.db);
      return { data, meta: { count: data.length } };
    }),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/sessions/{id}",
        tags,
        summary: "End a dashboard session",
        description: "Signs the session out: it stops within a second on every instance. An " +
          "admin may end anyone's session, any other caller only its own (404 for the rest).",
        protect: true,
        errorResponses: { 404: NOT_FOUND },
      },
      success: { 204: "Session ended" },
    })
    .input(sessionRef)
    .use(audited)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      const sessions = sessionsOf(ctx);
      const found = await sessions.get(input.id, ctx.db);
      const mine = found &&
        (seesAllSessions(ctx.principal) || found.name === ownName(ctx.principal));
      if (!mine || !await sessions.end(input.id, ctx.db)) {
        throw new DomainError("not_found", NOT_FOUND);
      }
    }),
});
