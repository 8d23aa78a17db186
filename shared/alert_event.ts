import { z } from "zod";
import { failedCheck } from "./expect.ts";

/**
 * What happened: a probe went down, recovered, became degraded, is still down (a reminder), its
 * incident was acknowledged, or someone tested a notification target.
 */
export const ALERT_EVENT_TYPES = [
  "probe.down",
  "probe.recovered",
  "probe.degraded",
  "probe.reminder",
  "probe.acknowledged",
  "probe.flapping",
  "target.test",
] as const;
export const alertEventType = z.enum(ALERT_EVENT_TYPES);
export type AlertEventType = z.infer<typeof alertEventType>;

/**
 * Where a probe stood, location by location, when the event happened (docs/locations.md): the
 * locations down, up, degraded and unknown (no result yet, or stale: none for three intervals;
 * `stale` lists those of them that had results before).
 */
export const locationStates = z.object({
  down: z.array(z.string()),
  up: z.array(z.string()),
  degraded: z.array(z.string()),
  unknown: z.array(z.string()),
  stale: z.array(z.string()),
});
export type LocationStates = z.infer<typeof locationStates>;

/** The details of an event; fields that do not apply (a test has no incident) are null. */
export const alertEventData = z.object({
  incident_id: z.string().nullable().describe(
    "The incident the event belongs to, as text (ids are 64-bit); null for a test.",
  ),
  project: z.string(),
  probe_id: z.string(),
  label: z.string().describe(
    "The probe's label, or its URL without credentials and query values.",
  ),
  url: z.string().nullable().describe(
    "The probe's URL, its credentials, query values and fragment masked (****); null for a test.",
  ),
  link: z.string().nullable().describe(
    "The probe's page in the dashboard, under PUBLIC_URL; null for a test.",
  ),
  state: z.enum(["unknown", "up", "degraded", "down"]).describe(
    "The probe's state once the event happened.",
  ),
  cause: z.string().nullable().describe(
    "Why the probe failed, in words (`answered HTTP 500, expected 200`); null when it did not.",
  ),
  error: z.string().nullable().describe(
    "The failing run's error as its result gives it (`HTTP 500`, `assertion failed: json.0`): " +
      "for a reminder or a recovery, the incident's last error; null when none.",
  ),
  http_status: z.int().nullable().describe(
    "The failing run's HTTP status; null without an answer, and for reminders and recoveries.",
  ),
  failed_checks: z.array(failedCheck).nullable().describe(
    "The failing run's failed checks (`status`, `json.0`, …) with what was expected and seen; " +
      "null when it had none to check, and for reminders and recoveries.",
  ),
  started_at: z.iso.datetime().nullable().describe("When the incident started."),
  resolved_at: z.iso.datetime().nullable().describe("When the incident was resolved."),
  duration_seconds: z.number().min(0).nullable().describe(
    "How long the probe has been (or was) down.",
  ),
  runs_failed: z.int().min(0).nullable().describe("Failing runs in a row that opened it."),
  locations: locationStates.nullable().describe(
    "The probe's locations by state: those failing (down) and those fine (up, degraded), and " +
      "those unknown or stale; null for a test.",
  ),
  escalation_step: z.int().min(1).optional().describe(
    "Only in a `probe.down` sent by an escalation step of the alert policy: the step's number " +
      "(1 for the first); absent from every other event.",
  ),
});
export type AlertEventData = z.infer<typeof alertEventData>;

/**
 * The event every notification target receives, in the Standard Webhooks shape
 * (`{ type, timestamp, data }`). Webhook targets get it as the JSON body; Slack, Discord, mail
 * and log targets get it rendered in their own format.
 */
export const alertEvent = z.object({
  type: alertEventType,
  timestamp: z.iso.datetime().describe("When the event happened (ISO 8601, UTC)."),
  data: alertEventData,
});
export type AlertEvent = z.infer<typeof alertEvent>;
