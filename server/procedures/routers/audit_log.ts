import { auditEntry, auditListInput, dataWithMeta, pageMeta } from "@probe/shared";
import { z } from "zod";
import { listAuditLog } from "../../domain/audit_log.ts";
import { apiProcedure, router } from "../init.ts";
import { pageAnswer } from "../pages.ts";

/** The audit log, read only: nothing of the interface changes or deletes an entry. */
export const auditLogRouter = router({
  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/audit-log",
        tags: ["audit-log"],
        summary: "List the audit log, newest first",
        description: "Every change made through the API (REST, `/trpc`, the dashboard, the " +
          "CLI, the client) and by the operator's restore and import, with who made it, from " +
          "where, and the fields it changed (secrets masked). Filter by `actor`, `resource` " +
          "(a type such as `probe`, or `probe:web/api-1a2b3c`), `since` and `before`; page " +
          "with `limit` and `after`. Admin only.",
        protect: true,
        errorResponses: { 403: "Not an admin key or user" },
      },
      paged: true,
    })
    .input(auditListInput)
    .output(dataWithMeta(z.array(auditEntry), pageMeta))
    // Admin only, by its rule in `access.ts`.
    .query(async ({ ctx, input }) => pageAnswer(await listAuditLog({ db: ctx.db, input }))),
});
