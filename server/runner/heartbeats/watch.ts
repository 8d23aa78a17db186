/**
 * The deadline watch: every `everyMs` (250 ms), on every instance, the heartbeats whose next
 * deadline has passed are taken (`FOR UPDATE SKIP LOCKED` on the deadline's index, so that with
 * several instances each is taken by one) and their misses recorded as runs that failed:
 *
 * - no success by `success_deadline`: down; the next deadline is one period (or the schedule's
 *   next time) on, so that a job that stays silent keeps failing once a period;
 * - a `/start` without its success within `max_duration_seconds` (the grace by default): down;
 * - a deadline inside a maintenance window of the project is no failure: the next one counts
 *   from the window's end, as if the job had pinged then.
 *
 * A service that was down past several deadlines records one miss, not one per deadline passed.
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "../../storage/database.ts";
import { json } from "../../storage/json.ts";
import { errorFields, type Logger } from "../../base/log.ts";
import { type Clock, systemClock } from "../../base/clock.ts";
import { createLoop } from "../../base/loop.ts";
import {
  deadlineAfter,
  type HeartbeatTiming,
  maxDurationMs,
} from "../../domain/heartbeat_timing.ts";
import { type HeartbeatRun, recordHeartbeatRuns } from "./record.ts";
import { seconds } from "./pings.ts";
import { type Window, windowsOf } from "./words.ts";

interface Due extends HeartbeatTiming {
  probe_key: number | string;
  project: string;
  last_start_at: Date | string | null;
  success_deadline: Date | string;
  /** False when the project is disabled: its deadlines move on, and no miss is recorded. */
  enabled: boolean;
}

const iso = (at: number) => new Date(at).toISOString();

/** The end of the window holding `at`, or null. */
const windowEnd = (windows: readonly Window[], at: number) =>
  windows.find((w) => w.start <= at && at < w.end)?.end ?? null;

/**
 * Records the misses of up to `limit` heartbeats whose deadline is at or before `now`; returns
 * how many were taken.
 */
export async function sweepDeadlines(
  db: Db,
  { now, limit = 500, localName }: { now: number; limit?: number; localName?: string },
): Promise<number> {
  // Most looks find nothing due: one indexed read then, not a transaction's three round trips
  // (the embedded database's thread answers four looks a second at rest).
  if (!(await anyDue(db, now))) return 0;
  return await db.transaction().execute(async (trx) => {
    // The probe rows with the heartbeats, as `pings.ts` takes them (a project delete's order).
    const { rows } = await sql<Due>`
      select h.probe_key, h.project, h.period_seconds, h.schedule, h.timezone, h.grace_seconds,
        h.max_duration_seconds, h.last_start_at, h.success_deadline,
        pr.status = 'enabled' as enabled
      from heartbeats h
      join probes p on p.key = h.probe_key
      join projects pr on pr.name = h.project
      where h.next_deadline <= ${iso(now)}
      order by h.next_deadline limit ${limit}
      for share of p skip locked for update of h skip locked`.execute(trx);
    if (rows.length === 0) return 0;
    const windows = await windowsOf(
      trx,
      [...new Set(rows.map((r) => r.project))],
      rows.map((r) => ({ at: new Date(r.success_deadline).getTime() })).concat({ at: now }),
    );
    const runs: HeartbeatRun[] = [];
    const updates = rows.map((row) => {
      const key = String(row.probe_key);
      const moved = miss(row, now, windows.get(row.project) ?? []);
      if (row.enabled) runs.push(...moved.runs.map((r) => ({ ...r, key })));
      return { k: key, start: moved.start, due: moved.due, next: moved.next };
    });
    await sql`
      update heartbeats h set last_start_at = x.start, success_deadline = x.due,
        next_deadline = x.next
      from json_to_recordset(${json(updates)})
        as x(k bigint, start timestamptz, due timestamptz, next timestamptz)
      where h.probe_key = x.k`.execute(trx);
    await recordHeartbeatRuns(trx, runs, localName);
    return rows.length;
  });
}

/** Whether some heartbeat's next deadline is at or before `now` (committed ones: a look). */
async function anyDue(db: Db, now: number): Promise<boolean> {
  const { rows } = await sql`
    select 1 from heartbeats where next_deadline <= ${iso(now)} limit 1`.execute(db);
  return rows.length > 0;
}

/** What passed deadlines make of one heartbeat. */
function miss(row: Due, now: number, windows: readonly Window[]) {
  const runs: Omit<HeartbeatRun, "key">[] = [];
  let start = row.last_start_at === null ? null : new Date(row.last_start_at).getTime();
  let due = new Date(row.success_deadline).getTime();
  const max = maxDurationMs(row);
  if (start !== null && start + max <= now && start + max <= due) {
    runs.push({
      at: start + max,
      passing: false,
      durationMs: max,
      error: `started ${iso(start)} and did not finish within ${seconds(max)} ` +
        `(max_duration_seconds)`,
      inMaintenance: windowEnd(windows, start + max) !== null,
    });
    start = null;
  }
  if (due <= now) {
    const end = windowEnd(windows, due);
    const expected = due - row.grace_seconds * 1000;
    if (end === null) {
      runs.push({
        at: due,
        passing: false,
        durationMs: 0,
        error: `no ping by its deadline ${iso(due)} (expected ${iso(expected)}, ` +
          `grace ${row.grace_seconds} s)`,
        inMaintenance: false,
      });
    }
    let anchor = end ?? expected;
    due = deadlineAfter(row, anchor);
    // Deadlines passed while the service was down are skipped: one miss was recorded.
    while (due <= now) {
      anchor = due - row.grace_seconds * 1000;
      due = deadlineAfter(row, anchor);
    }
    if (start !== null && start < anchor) start = null;
  }
  const next = start === null ? due : Math.min(due, start + max);
  return { runs, start: start === null ? null : iso(start), due: iso(due), next: iso(next) };
}

export interface HeartbeatWatch {
  start(): void;
  stop(): Promise<void>;
}

/** The watch's loop on `clock` (see the module's note); `onMissed` is told when runs were recorded. */
export function createHeartbeatWatch(
  { db, log, clock = systemClock, everyMs = 250, limit = 500, localName, onMissed }: {
    db: Db;
    log: Logger;
    clock?: Clock;
    everyMs?: number;
    limit?: number;
    localName?: string;
    onMissed?: () => void;
  },
): HeartbeatWatch {
  const loop = createLoop({
    name: "heartbeat deadlines",
    clock,
    log,
    everyMs,
    firstMs: 0,
    task: async () => {
      const taken = await sweepDeadlines(db, { now: clock.now(), limit, localName })
        .catch((error) => {
          log.warn("heartbeat deadlines failed", errorFields(error));
          return 0;
        });
      if (taken > 0) onMissed?.();
      // A full batch: more may be due, at once.
      return taken >= limit;
    },
  });
  return {
    start: () => void loop.start(),
    stop: async () => void await loop.stop(),
  };
}
