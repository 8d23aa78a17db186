/**
 * What a remote runner posts, as the service reads it: the lease holder of a claim, the statuses
 * a post answers with, and a posted result as the store records it (run ids are the protocol's:
 * `parseRunId` in `shared/runner_protocol.ts`). Shared by `remote_runs.ts` (leased runs)
 * and `offline_runs.ts` (runs made during an outage).
 *
 * Results are dated by the service's clock: a `started_at` more than `CLOCK_SKEW_MS` ahead of
 * it, before the run's due time less the lease a claim gives it, or more than the skew before
 * its probe was made is refused (`expired`), as is a run due before the probe was made; a start
 * ahead of the service's clock by less is recorded as of the service's clock, so a location's
 * last run, and when it goes stale, never run ahead of the service.
 *
 * @module
 */
import type { ResultsPostAnswer, ResultsPostInput, RunRef } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { nextDue, offsetOf } from "../domain/schedule.ts";
import type { Completed, Verdicts } from "./store.ts";

/** The holder a claim's leases are taken by: the runner and the claim, so no two share one. */
export const holderOf = (runner: string, claim: string) => `${runner}#${claim}`;

export type RunStatus = ResultsPostAnswer["results"][number]["status"];

/** How far ahead of the service's clock a posted `started_at` may be: clocks differ a little. */
export const CLOCK_SKEW_MS = 30_000;

type Posted = ResultsPostInput["results"][number];

/** What recording a post's runs takes: whose runs, which, and the service's clock. */
export interface PostedRuns {
  location: string;
  /** The posting runner's name: its leases are held as `<runner>#<claim>`. */
  runner: string;
  runs: { ref: RunRef; result: Posted }[];
  verdicts: Verdicts;
  at: number;
  /** The lease a claim gives a run of a probe with this timeout (null: the service's). */
  lease: (timeoutMs: number | null) => number;
}

/** A probe as a posted result of it is judged (ms). */
export interface PostedProbe {
  intervalMs: number;
  createdAt: number;
  /** The lease a claim gives its runs. */
  leaseMs: number;
}

/** Whether a result starts further ahead of the service's clock than `CLOCK_SKEW_MS`. */
export const aheadOfClock = (r: Posted, at: number) =>
  Date.parse(r.started_at) > at + CLOCK_SKEW_MS;

/**
 * Whether a result is dated where no run of its slot could be: started before the run's due
 * time less its lease or before its probe was made (less the skew), or due before then.
 */
export function misdated(r: Posted, ref: RunRef, probe: PostedProbe): boolean {
  const started = Date.parse(r.started_at);
  return started < ref.due - probe.leaseMs || started < probe.createdAt - CLOCK_SKEW_MS ||
    ref.due < probe.createdAt - CLOCK_SKEW_MS;
}

/** A posted result as the store records it, with the probe's next due time. */
export function completedOf(
  r: Posted,
  ref: RunRef,
  intervalMs: number,
  at: number,
): Completed {
  return {
    key: ref.key,
    due: ref.due,
    nextDue: nextDue({
      due: ref.due,
      now: at,
      offsetMs: offsetOf(ref.key, intervalMs),
      intervalMs,
    }),
    inMaintenance: ref.inMaintenance,
    result: {
      // A start ahead of the service's clock (by the skew at most) is dated by the service's.
      startedAt: new Date(Math.min(Date.parse(r.started_at), at)),
      durationMs: r.duration_ms,
      outcome: r.outcome,
      httpStatus: r.http_status,
      error: r.error,
      address: r.address,
      failedChecks: r.failed_checks,
    },
  };
}

/** What `postedProbeOf` reads of a probe's row. */
export interface PostedProbeRow {
  interval_seconds: number | null;
  timeout_ms: number | null;
  created_at: Date | string;
}

/** A probe's row as `PostedProbe`: `intervalMs` where it has no interval of its own. */
export const postedProbeOf = (
  r: PostedProbeRow,
  { intervalMs, lease }: { intervalMs: number; lease: PostedRuns["lease"] },
): PostedProbe => ({
  intervalMs: r.interval_seconds === null ? intervalMs : r.interval_seconds * 1000,
  createdAt: new Date(r.created_at).getTime(),
  leaseMs: lease(r.timeout_ms),
});

/** Each probe of `keys` that still exists, as `PostedProbe`. */
export async function postedProbes(
  trx: Db,
  keys: string[],
  defaults: { intervalMs: number; lease: PostedRuns["lease"] },
): Promise<Map<string, PostedProbe>> {
  const rows = await sql<PostedProbeRow & { key: number | string }>`
    select key, interval_seconds, timeout_ms, created_at from probes
    where key in (select x.k from json_to_recordset(${json([...new Set(keys)].map((k) => ({ k })))})
      as x(k bigint))`.execute(trx);
  return new Map(rows.rows.map((r) => [String(r.key), postedProbeOf(r, defaults)]));
}

/**
 * Which of these slots (probe and due time) have a result at `location`: recorded by `holder`
 * when given (a claim's own), else by any runner.
 */
export async function recordedSlots(
  trx: Db,
  location: string,
  refs: RunRef[],
  holder?: string,
): Promise<Set<string>> {
  if (refs.length === 0) return new Set();
  const { rows } = await sql<{ probe_key: number | string; due_at: Date | string }>`
    select r.probe_key, r.due_at from probe_results r
    join json_to_recordset(${
    json(refs.map((r) => ({ k: r.key, d: new Date(r.due).toISOString() })))
  })
      as x(k bigint, d timestamptz) on r.probe_key = x.k and r.due_at = x.d
    where r.location = ${location} and ${
    holder === undefined ? sql`true` : sql`r.runner = ${holder}`
  }
      and r.started_at >= x.d - interval '1 day'`.execute(trx);
  return new Set(rows.map((r) => `${r.probe_key}@${new Date(r.due_at).getTime()}`));
}
