import { z } from "zod";
import { pageQuery } from "./envelope.ts";
import { instant } from "./instant.ts";

/** What an audit entry's `before` and `after` hold: the resource's fields, secrets masked. */
const fields = z.record(z.string(), z.unknown()).nullable();

/** One change: who made it, from where, to what, and what it changed. */
export const auditEntry = z.object({
  /** Its id: a positive integer, as a string; newer entries have greater ids. */
  id: z.string(),
  at: z.string(),
  /** The key's name, the signed-in user, or the operator's command. */
  actor: z.string(),
  /** How the actor proved who it is: `configured_key`, `stored_key`, `session` or `operator`. */
  actor_source: z.string(),
  address: z.string().nullable(),
  user_agent: z.string().nullable(),
  /** The request's id, as in the service's log line of the request. */
  request_id: z.string().nullable(),
  /** The operation, by its procedure's name (`probes.update`). */
  operation: z.string(),
  resource: z.object({
    /** `project`, `probe`, `notification_target`, `settings`… */
    type: z.string(),
    /** The resource's name or id within its type (`web`, `web/api-1a2b3c`). */
    id: z.string(),
  }),
  before: fields.describe(
    "The fields that changed, as they were (the whole resource for a delete; null for a " +
      "create). Secrets are masked as a viewer sees them.",
  ),
  after: fields.describe(
    "The fields that changed, as they are now (the whole resource for a create; null for a " +
      "delete). A secret written but never shown reads `<changed>`.",
  ),
});
export type AuditEntry = z.infer<typeof auditEntry>;

// Query strings arrive as text.
export const auditListInput = z.object({
  actor: z.string().min(1).max(200).optional().describe("Only this actor's entries."),
  resource: z.string().min(1).max(600).optional().describe(
    "Only entries of this resource type (`probe`), or of one resource (`probe:web/api-1a2b3c`).",
  ),
  since: instant.optional().describe("Only entries at or after this time."),
  before: instant.optional().describe("Only entries before this time."),
  ...pageQuery,
});
export type AuditListInput = z.infer<typeof auditListInput>;
