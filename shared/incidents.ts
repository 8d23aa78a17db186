import { z } from "zod";
import { locationStates } from "./alert_event.ts";

export const INCIDENT_RESOLUTIONS = ["recovered", "changed", "deleted", "disabled"] as const;
export const MAX_INCIDENTS_LIMIT = 500;

/** An incident's id: a positive integer, as a string (ids outgrow JavaScript numbers). */
export const incidentId = z.string().regex(/^[1-9][0-9]{0,17}$/, "is not an incident id");

export const incidentRef = z.object({ id: z.string() });

// Query strings arrive as text: numbers are coerced explicitly.
export const incidentListInput = z.object({
  project: z.string().optional(),
  probe_id: z.string().optional().describe(
    "Only this probe's incidents (with `project`), also those from before a change of its URL " +
      "or method gave it a new id.",
  ),
  state: z.enum(["open", "resolved"]).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_INCIDENTS_LIMIT).default(50),
  before: incidentId.optional().describe("The `meta.next_before` of the previous page."),
});
export type IncidentListInput = z.infer<typeof incidentListInput>;

export const incident = z.object({
  id: z.string(),
  project: z.string(),
  probe_id: z.string(),
  /** The probe's label, or its URL without credentials and query values. */
  label: z.string(),
  state: z.enum(["open", "resolved"]),
  started_at: z.string(),
  resolved_at: z.string().nullable(),
  duration_seconds: z.int().nullable(),
  resolution: z.enum(INCIDENT_RESOLUTIONS).nullable(),
  cause: z.string(),
  runs_failed: z.int(),
  last_error: z.string().nullable(),
  acknowledged_at: z.string().nullable(),
  /** The probe's locations failing, fine and unknown (stale), as the incident last saw them. */
  locations: locationStates.nullable(),
  /** Present while a dependency's being down holds its notifications back (or held them). */
  suppressed: z.string().optional().describe(
    'Only when a probe it depends on was down as it opened: "suppressed: <dependency> is down"; ' +
      "its notifications wait for that dependency to recover (docs/alerts.md).",
  ),
});
export type Incident = z.infer<typeof incident>;

export const incidentNotification = z.object({
  id: z.string(),
  type: z.string(),
  target: z.string(),
  status: z.enum(["pending", "delivered", "failed"]),
  attempts: z.int(),
  created_at: z.string(),
  delivered_at: z.string().nullable(),
  last_error: z.string().nullable(),
});

export const incidentDetail = incident.extend({ notifications: z.array(incidentNotification) });
export type IncidentDetail = z.infer<typeof incidentDetail>;

export const incidentsMeta = z.object({
  count: z.int(),
  /** Pass as `before` for the next (older) page; null on the last page. */
  next_before: z.string().nullable(),
});
