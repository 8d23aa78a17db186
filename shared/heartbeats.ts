/**
 * Heartbeats: a job pings its URL; silence past a deadline, a failure ping or a run of the wrong
 * length is the alert (docs/heartbeats.md). Schemas of the heartbeat API and of its pings.
 *
 * @module
 */
import { z } from "zod";
import { pageQuery } from "./envelope.ts";
import { nameInPath, projectName } from "./project.ts";
import { dependsOnField } from "./probe.ts";

/** The shortest and the longest period, and the longest grace or run (seconds): a year. */
export const HEARTBEAT_MIN_PERIOD_SECONDS = 10;
export const HEARTBEAT_MAX_SECONDS = 366 * 24 * 3600;
/** The grace of a heartbeat created without one (seconds). */
export const HEARTBEAT_DEFAULT_GRACE_SECONDS = 60;
/** How much of a ping's body is kept (bytes); a longer body is cut there. */
export const HEARTBEAT_PING_BODY_KEPT = 10 * 1024;
/** The largest ping body accepted (bytes): a longer one is refused (413). */
export const HEARTBEAT_PING_BODY_MAX = 100 * 1024;
/** How many of a heartbeat's latest pings are kept. */
export const HEARTBEAT_PINGS_KEPT = 100;
/** The path under which ping URLs are served: `/ping/<token>[/start|/fail|/log|/<code>]`. */
export const PING_PREFIX = "/ping/";

const seconds = (min: number) => z.int().min(min).max(HEARTBEAT_MAX_SECONDS);

/** What a heartbeat is, as a `ping` reads it: `new` until its first ping or missed deadline. */
export const HEARTBEAT_STATES = ["new", "up", "down"] as const;
export const heartbeatState = z.enum(HEARTBEAT_STATES);
export type HeartbeatState = z.infer<typeof heartbeatState>;

/** The kinds of ping: a success, a start, a failure, a log line, an exit code. */
export const PING_KINDS = ["success", "start", "fail", "log", "exit"] as const;
export const pingKind = z.enum(PING_KINDS);
export type PingKind = z.infer<typeof pingKind>;

const timing = {
  period_seconds: seconds(HEARTBEAT_MIN_PERIOD_SECONDS).describe(
    "How often the job runs (10 s to a year). Give this or `schedule`.",
  ),
  schedule: z.string().min(1).max(200).describe(
    "A cron expression for when the job runs (five fields, or six with seconds). Give this or " +
      "`period_seconds`.",
  ),
  timezone: z.string().min(1).max(100).describe(
    "The IANA time zone `schedule` is read in (`Europe/Berlin`); UTC when left out.",
  ),
  grace_seconds: seconds(0).describe(
    "How late a ping may be before the heartbeat is down " +
      `(${HEARTBEAT_DEFAULT_GRACE_SECONDS} s when left out).`,
  ),
  max_duration_seconds: seconds(1).nullable().describe(
    "How long after `/start` its success may come; null: the grace.",
  ),
  min_duration_seconds: seconds(0).nullable().describe(
    "A run from `/start` to its success shorter than this is a failure; null: none.",
  ),
};

/** `POST /projects/{project}/heartbeats`. */
/** The timing fields a create or a PATCH may give, each optional. */
const timingInput = {
  period_seconds: timing.period_seconds.optional(),
  schedule: timing.schedule.optional(),
  timezone: timing.timezone.optional(),
  grace_seconds: timing.grace_seconds.optional(),
  max_duration_seconds: timing.max_duration_seconds.optional(),
  min_duration_seconds: timing.min_duration_seconds.optional(),
};

export const heartbeatCreateInput = z.strictObject({
  project: nameInPath,
  name: projectName.describe("Unique in its project; the heartbeat's path segment."),
  ...timingInput,
  depends_on: dependsOnField,
});
export type HeartbeatCreateInput = z.infer<typeof heartbeatCreateInput>;

export const heartbeatRef = z.object({ project: nameInPath, name: nameInPath });
export type HeartbeatRef = z.infer<typeof heartbeatRef>;

/**
 * `PATCH /projects/{project}/heartbeats/{name}`: the fields given change. `period_seconds`
 * replaces a schedule, `schedule` a period.
 */
export const heartbeatPatchInput = z.strictObject({
  project: nameInPath,
  name: nameInPath,
  ...timingInput,
  depends_on: dependsOnField,
});
export type HeartbeatPatchInput = z.infer<typeof heartbeatPatchInput>;

export const heartbeatListInput = z.object({ project: nameInPath, ...pageQuery });

/** A heartbeat as read. */
export const heartbeat = z.object({
  project: z.string(),
  name: z.string(),
  /** Its probe's id: status pages, badges, results and incidents name the heartbeat by it. */
  probe_id: z.string(),
  period_seconds: z.int().nullable(),
  schedule: z.string().nullable(),
  timezone: z.string().nullable(),
  grace_seconds: z.int(),
  max_duration_seconds: z.int().nullable(),
  min_duration_seconds: z.int().nullable(),
  state: heartbeatState,
  state_since: z.string().nullable(),
  last_ping_at: z.string().nullable(),
  last_ping_kind: pingKind.nullable(),
  /** From `/start` to its success, of the last run that had a start (ms). */
  last_duration_ms: z.int().nullable(),
  /** When the heartbeat is down without a success ping; null when none is pending. */
  next_deadline: z.string().nullable(),
  /** Every ping received. */
  pings_total: z.int(),
  /** Where the job pings; its token is `****` for read-only keys. */
  ping_url: z.string(),
  created_at: z.string(),
  /** The probes it depends on; absent when none. */
  depends_on: z.array(z.string()).optional().describe(
    "The probe_ids this heartbeat depends on; absent when it depends on none.",
  ),
});
export type Heartbeat = z.infer<typeof heartbeat>;

export const heartbeatPingsInput = z.object({
  project: nameInPath,
  name: nameInPath,
  limit: z.coerce.number().int().min(1).max(100).optional().describe(
    "The latest this many pings (1 to 100; all that are kept by default).",
  ),
});

/** A ping as kept: the latest first. */
export const heartbeatPing = z.object({
  /** The ping's number: the heartbeat's pings are counted from 1. */
  n: z.int(),
  at: z.string(),
  kind: pingKind,
  /** The exit code of an exit ping (`/<code>`); null for the others. */
  exit_code: z.int().nullable(),
  method: z.string(),
  /** The client's address (`TRUSTED_PROXIES` names it behind a proxy). */
  address: z.string().nullable(),
  /** The first 10 KiB of a POST's body (as UTF-8, invalid bytes replaced); null without one. */
  body: z.string().nullable(),
  /** The body's whole size in bytes. */
  body_bytes: z.int(),
});
export type HeartbeatPing = z.infer<typeof heartbeatPing>;
