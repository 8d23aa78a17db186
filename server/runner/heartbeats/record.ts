/**
 * A heartbeat's runs (a success, a failure, a missed deadline) recorded as its probe's runs, in
 * the caller's transaction: the probe's schedule row settles them (its state moves: one failure
 * is down, one success recovers, `server/alerting/states.ts`), the results and rollups keep them,
 * and the verdict opens or resolves the incident and queues notifications, exactly once.
 *
 * @module
 */
import { DEFAULT_LOCAL_LOCATION, PROBE_INTERVAL_SECONDS } from "@probe/shared";
import { type RawBuilder, sql } from "kysely";
import type { Db } from "../../storage/database.ts";
import { json } from "../../storage/json.ts";
import { compareKeys } from "../../storage/keys.ts";
import { settleSchedule } from "../../alerting/states.ts";
import { decideVerdicts } from "../../alerting/verdicts.ts";
import { insertRuns, runInserts } from "../store.ts";
import { LOCAL } from "../../domain/locations.ts";

/** Recorded as the results' runner. */
export const HEARTBEAT_RUNNER = "heartbeat";

/** One run of a heartbeat's job, as its pings or its deadlines tell it. */
export interface HeartbeatRun {
  key: string;
  at: number;
  passing: boolean;
  /** From `/start` to the success or failure (ms); 0 without a start. */
  durationMs: number;
  /** What failed, in words; null for a success. */
  error: string | null;
  inMaintenance: boolean;
}

/** A run as its probe's result records it. */
const resultOf = (r: HeartbeatRun) => ({
  startedAt: new Date(r.at),
  durationMs: r.durationMs,
  outcome: r.passing ? "up" as const : "down" as const,
  httpStatus: null,
  error: r.error,
  address: null,
  failedChecks: null,
});

/** Runs split into quiet successes and the rounds that settle the rest (see below). */
export interface SplitRuns {
  quiet: HeartbeatRun[];
  rounds: HeartbeatRun[][];
}

/**
 * Records runs in order. A probe's schedule row settles one run per statement, so runs are
 * settled in rounds: each heartbeat's first run, then its second, and so on.
 *
 * `upNow` names the heartbeats whose probe is up as the caller read it after locking them: their
 * successes (counted, so outside maintenance) until another kind of run are stored as results
 * alone, without settling: they would move no state, verdict, incident or notification. Most
 * pings are such, and this spares them most of the work.
 */
export async function recordHeartbeatRuns(
  trx: Db,
  runs: readonly HeartbeatRun[],
  localName = DEFAULT_LOCAL_LOCATION,
  upNow: ReadonlySet<string> = new Set(),
): Promise<void> {
  const { quiet, rounds } = splitRuns(runs, upNow);
  for (const statement of quietWrites(quiet)) await statement.execute(trx);
  await settleRounds(trx, rounds, localName);
}

/** `runs` as {@link recordHeartbeatRuns} records them: quiet successes, and rounds to settle. */
export function splitRuns(
  runs: readonly HeartbeatRun[],
  upNow: ReadonlySet<string>,
): SplitRuns {
  const rounds: HeartbeatRun[][] = [];
  const seen = new Map<string, number>();
  const quiet: HeartbeatRun[] = [];
  const stillUp = new Set(upNow);
  for (const run of runs) {
    if (stillUp.has(run.key) && run.passing && !run.inMaintenance) {
      quiet.push(run);
      continue;
    }
    stillUp.delete(run.key);
    const round = seen.get(run.key) ?? 0;
    seen.set(run.key, round + 1);
    (rounds[round] ??= []).push(run);
  }
  return { quiet, rounds };
}

/**
 * The statements that record quiet successes, unrun (none without any): their results, their
 * rollups, and their schedule rows' last run. No two touch the same row, so a caller may send
 * them as parts of one statement.
 */
export function quietWrites(quiet: readonly HeartbeatRun[]): RawBuilder<unknown>[] {
  if (quiet.length === 0) return [];
  const runs = quiet.map((r) => ({ key: r.key, due: r.at, result: resultOf(r) }));
  return [...runInserts(HEARTBEAT_RUNNER, runs, LOCAL), markLastRuns(quiet)];
}

/** Settles `rounds` in order: the schedule rows, the results, the verdicts they move. */
export async function settleRounds(
  trx: Db,
  rounds: readonly HeartbeatRun[][],
  localName = DEFAULT_LOCAL_LOCATION,
): Promise<void> {
  for (const round of rounds) {
    const results = round.map((r) => ({
      key: r.key,
      run: resultOf(r),
      inMaintenance: r.inMaintenance,
    }));
    const { settled, changes } = await settleSchedule(
      trx,
      results.map((r) => ({
        key: r.key,
        dueAt: null,
        nextDueAt: null,
        run: r.run,
        counted: !r.inMaintenance,
      })),
      { manual: true },
      LOCAL,
    );
    await insertRuns(
      trx,
      HEARTBEAT_RUNNER,
      results.filter((r) => settled.has(r.key)).map((r) => ({
        key: r.key,
        due: r.run.startedAt.getTime(),
        result: r.run,
        inMaintenance: r.inMaintenance,
      })),
      LOCAL,
    );
    // A success that leaves an up heartbeat up changes no verdict, incident or notification: the
    // common ping skips the decision (one location, so its state is the verdict).
    const deciding = changes.filter((c) => !(c.from === "up" && c.to === "up"));
    await decideVerdicts(trx, deciding.map((c) => c.key), {
      localName,
      intervalMs: PROBE_INTERVAL_SECONDS.default * 1000,
      now: new Date(Math.max(...round.map((r) => r.at))),
      triggers: new Map(deciding.map((c) => [c.key, c])),
    });
  }
}

/**
 * The last run's time and outcome of heartbeats whose quiet successes were stored as results
 * alone: reads (status, overview, stats) show them, and would otherwise show the last success
 * that was settled, however often the job has pinged since.
 */
function markLastRuns(quiet: readonly HeartbeatRun[]): RawBuilder<unknown> {
  const latest = new Map<string, number>();
  for (const r of quiet) latest.set(r.key, Math.max(latest.get(r.key) ?? r.at, r.at));
  const rows = [...latest].sort(([a], [b]) => compareKeys(a, b))
    .map(([k, at]) => ({ k, at: new Date(at).toISOString() }));
  return sql`
    update probe_schedule s
    set last_run_at = greatest(x.at, s.last_run_at),
      last_outcome = case when s.last_run_at is null or x.at >= s.last_run_at then 'up'
                          else s.last_outcome end
    from json_to_recordset(${json(rows)}) as x(k bigint, at timestamptz)
    where s.probe_key = x.k and s.location = ${LOCAL}`;
}
