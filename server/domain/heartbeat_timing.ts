/**
 * When a heartbeat's ping is due: after a period, or at the next time of a cron schedule read in
 * an IANA time zone (`croner`, which knows daylight-saving changes), plus the grace. Pure: times
 * are milliseconds, nothing is read from a clock.
 *
 * @module
 */
import { Cron } from "croner";
import type { ErrorDetail } from "@probe/shared";

/** What a heartbeat's deadlines follow. */
export interface HeartbeatTiming {
  period_seconds: number | null;
  schedule: string | null;
  timezone: string | null;
  grace_seconds: number;
  max_duration_seconds: number | null;
}

/** Whether the runtime knows this IANA zone name. */
function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The schedule as croner reads it (paused: it is only asked for times, never runs anything). */
const cronOf = (schedule: string, timezone: string | null) =>
  new Cron(schedule, { timezone: timezone ?? "UTC", paused: true });

/** What is wrong with a timing, each naming its field; none when it is sound. */
export function timingProblems(t: HeartbeatTiming, at: number): ErrorDetail[] {
  if ((t.period_seconds === null) === (t.schedule === null)) {
    return [{ path: "period_seconds", message: "give either period_seconds or schedule" }];
  }
  if (t.schedule === null) {
    return t.timezone === null
      ? []
      : [{ path: "timezone", message: "applies to a schedule, not to a period" }];
  }
  if (t.timezone !== null && !knownZone(t.timezone)) {
    return [{ path: "timezone", message: "is not an IANA time zone name (such as Europe/Berlin)" }];
  }
  let next: Date | null;
  try {
    next = cronOf(t.schedule, t.timezone).nextRun(new Date(at));
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^[A-Za-z]+: /, "") : "";
    return [{ path: "schedule", message: `is not a cron expression: ${reason}`.slice(0, 300) }];
  }
  if (next === null) return [{ path: "schedule", message: "never comes" }];
  return [];
}

/** When the next ping is expected after `at`: a period later, or the schedule's next time. */
export function expectedAfter(t: HeartbeatTiming, at: number): number {
  if (t.period_seconds !== null) return at + t.period_seconds * 1000;
  const next = cronOf(t.schedule!, t.timezone).nextRun(new Date(at));
  // A schedule checked when written always comes again; a year on stands in should one not.
  return next?.getTime() ?? at + 366 * 86_400_000;
}

/** The deadline for a success after `anchor` (the last success, or the creation). */
export const deadlineAfter = (t: HeartbeatTiming, anchor: number) =>
  expectedAfter(t, anchor) + t.grace_seconds * 1000;

/** How long a started run may take (ms): `max_duration_seconds`, else the grace. */
export const maxDurationMs = (t: HeartbeatTiming) =>
  (t.max_duration_seconds ?? t.grace_seconds) * 1000;

/**
 * The next deadline: the success's, or a started run's end when that comes first. `anchor` is
 * the time the success's deadline counts from (`deadlineAfter`), `startedAt` an open `/start`.
 */
export function nextDeadline(
  t: HeartbeatTiming,
  { anchor, startedAt }: { anchor: number; startedAt: number | null },
): number {
  const late = deadlineAfter(t, anchor);
  return startedAt === null ? late : Math.min(late, startedAt + maxDurationMs(t));
}
