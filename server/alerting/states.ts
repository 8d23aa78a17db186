/**
 * Probe states, moved by recorded runs. A probe is `unknown` until its first counted run; it goes
 * `down` after `failure_threshold` failing runs in a row (down or blocked, a failed assertion
 * included), and leaves `down` after `success_threshold` passing runs in a row; a passing run
 * is `up`, or `degraded` when it was slower than the probe's latency (which counts as passing).
 * Runs in a maintenance window do not count: the state and its streaks stay as they were.
 *
 * The state sits on the probe's schedule row and moves with it, in the statement that settles a
 * batch of runs, in the transaction that records them, with the rows locked in key order (as
 * everywhere in the runner's store): with several runners and instances, each transition
 * happens exactly once.
 *
 * @module
 */
import { compareKeys } from "../storage/keys.ts";
import { sql } from "kysely";
import {
  ALERT_POLICY_FIELDS,
  type FailedCheck,
  type LocationStates,
  type Outcome,
} from "@probe/shared";
import type { Db } from "../storage/database.ts";
import type { ProbeState } from "../storage/schema.ts";
import { json } from "../storage/json.ts";
import { effectivePolicy } from "./policy_sql.ts";

/** What settling needs of a finished run. */
export interface SettledRun {
  outcome: Outcome;
  startedAt: Date;
  error: string | null;
  /** What the run's result records beside its error (absent: none), for alerts' words. */
  httpStatus?: number | null;
  failedChecks?: FailedCheck[] | null;
}

/** Where a run left its probe, with what alerting needs of the probe and its policy. */
export interface StateChange {
  key: string;
  from: ProbeState;
  to: ProbeState;
  /** Whether the run passed (up or degraded). */
  passing: boolean;
  startedAt: Date;
  error: string | null;
  /** The run's HTTP status and failed checks, as its result records them. */
  httpStatus: number | null;
  failedChecks: FailedCheck[] | null;
  failStreak: number;
  project: string;
  probeId: string;
  url: string;
  label: string | null;
  /** The probe's locations by state, when decided by quorum (`verdicts.ts`). */
  locations?: LocationStates;
  /** Its notifications held back: the probe is flapping (`flapping.ts`). */
  quiet?: boolean;
  policy: {
    enabled: boolean;
    targets: string[];
    reminderMinutes: number;
    notifyDegraded: boolean;
    notifyRecovered: boolean;
  };
}

export const isPassing = (outcome: Outcome) => outcome === "up" || outcome === "degraded";

/** A run to settle on its probe's schedule row. */
export interface Settling {
  key: string;
  /** The due time the runner claimed; null for a manual run. */
  dueAt: Date | null;
  /** When the probe is next due; null keeps it (a manual run). */
  nextDueAt: Date | null;
  /** The run; null when it was skipped (its project is disabled). */
  run: SettledRun | null;
  /** Whether the run counts toward the state: not in a maintenance window. */
  counted: boolean;
}

/**
 * Settles finished runs on their probes' schedule rows, in one statement: the row moves on (next
 * due time, lease given back, last run) and, for runs that count, the state and its streaks move
 * too. A scheduled run settles only where `runner` still holds the lease for that very due time;
 * a manual run wherever its probe still has a row. The rows are locked in key order. Returns the
 * keys settled, and the state changes of the counted runs (including those that kept the state).
 *
 * One statement, not two: a row updated twice in a transaction has its foreign key checked on
 * the second update (it is no longer the row the key was checked for), which takes a share lock
 * on the probe, after the schedule row's: the opposite order to a project delete's, a deadlock.
 */
export async function settleSchedule(
  trx: Db,
  settling: readonly Settling[],
  holder: { runner: string } | { manual: true },
  location = "",
): Promise<{ settled: Set<string>; changes: StateChange[] }> {
  if (settling.length === 0) return { settled: new Set(), changes: [] };
  const changed = await settleRows(trx, settlingRows(settling), holder, location);
  const settled = new Set(changed.map((r) => String(r.probe_key)));
  const runs = Map.groupBy(settling, (s) => s.key);
  // The run each row settled (a batch may hold two runs of a probe: the one that started then).
  const runOf = (r: SettledRow) =>
    runs.get(String(r.probe_key))?.find((s) =>
      s.run?.startedAt.getTime() === new Date(r.started_at!).getTime()
    )?.run ?? null;
  const changes = changed.filter((r) => r.counted && r.project !== null)
    .map((r) => stateChangeOf(r, runOf(r)));
  return { settled, changes };
}

/** The runs to settle as the statement's records, in key order (the order rows are locked in). */
function settlingRows(settling: readonly Settling[]) {
  return [...settling]
    .sort((a, b) => compareKeys(a.key, b.key))
    .map((s) => ({
      probe_key: s.key,
      due_at: s.dueAt?.toISOString() ?? null,
      next_due_at: s.nextDueAt?.toISOString() ?? null,
      started_at: s.run?.startedAt.toISOString() ?? null,
      outcome: s.run?.outcome ?? null,
      error: s.run?.error ?? null,
      counted: s.run !== null && s.counted,
      passing: s.run !== null && isPassing(s.run.outcome),
    }));
}

/** A schedule row `settleRows` moved, with what its state change needs. */
interface SettledRow {
  probe_key: number | string;
  counted: boolean;
  old_state: ProbeState;
  state: ProbeState;
  fail_streak: number;
  passing: boolean;
  started_at: Date | string | null;
  error: string | null;
  project: string | null;
  probe_id: string | null;
  url: string | null;
  label: string | null;
  enabled: boolean | null;
  targets: string[] | null;
  reminder_minutes: number | null;
  notify_degraded: boolean | null;
  notify_recovered: boolean | null;
}

/**
 * The one statement of `settleSchedule` (see there): moves the schedule rows `holder` holds at
 * `location` ('' for the built-in one), returning each row it moved.
 */
async function settleRows(
  trx: Db,
  rows: ReturnType<typeof settlingRows>,
  holder: { runner: string } | { manual: true },
  location: string,
): Promise<SettledRow[]> {
  const manual = "manual" in holder;
  const held = manual
    ? sql`true`
    : sql`s.leased_by = ${"runner" in holder ? holder.runner : ""} and s.next_due_at = x.due_at`;
  const { rows: changed } = await sql<SettledRow>`
    with x as (
      select * from json_to_recordset(${json(rows)})
        as x(probe_key bigint, due_at timestamptz, next_due_at timestamptz,
             started_at timestamptz, outcome text, error text, counted boolean, passing boolean)
    ), locked as (
      select s.probe_key, s.state, s.fail_streak, s.pass_streak, s.last_run_at
      from probe_schedule s join x on x.probe_key = s.probe_key and s.location = ${location}
      where ${held}
      order by s.probe_key for update of s
    ), fresh as (
      -- A run that started before the last one settled (a scheduled run recorded after a
      -- run-now that began later) is history: it is kept, but it does not move the state.
      select x.probe_key, x.due_at, x.next_due_at, x.started_at, x.outcome, x.error, x.passing,
        x.counted and (l.last_run_at is null or x.started_at >= l.last_run_at) as counted,
        x.counted as asked, l.state as old_state, l.fail_streak as old_fail,
        l.pass_streak as old_pass
      from x join locked l on l.probe_key = x.probe_key
    ), calc as (
      select x.probe_key, x.due_at, x.next_due_at, x.started_at, x.outcome, x.error, x.passing,
        x.counted, x.old_state, pol.project, pol.probe_id, pol.url, pol.label,
        pol.enabled, pol.targets, pol.reminder_minutes, pol.notify_degraded,
        pol.notify_recovered,
        case when not x.counted then x.old_fail
             when x.passing then 0 else x.old_fail + 1 end as new_fail,
        case when not x.counted then x.old_pass
             when x.passing then x.old_pass + 1 else 0 end as new_pass,
        case
          when not x.counted or pol.probe_key is null then x.old_state
          -- A heartbeat's run is one job's run: one failure is down, one success recovers.
          when not x.passing then
            case when x.old_fail + 1 >= pol.failure_threshold or pol.url like 'heartbeat://%'
                 then 'down' else x.old_state end
          when x.old_state = 'down' and x.old_pass + 1 < pol.success_threshold
               and pol.url not like 'heartbeat://%' then 'down'
          else x.outcome
        end as new_state
      from fresh x
      -- The probe and its policy looked up by key, run by run. As a join of its own, the
      -- planner (which takes the runs for 100 rows and the locked ones for 1) read the runs
      -- once for each run, and the locked rows again: 0.4 ms a run in a batch of 500, the
      -- runner's recording bound.
      left join lateral (
        select p.key as probe_key, p.project, p.probe_id, p.url, p.label,
          ${effectivePolicy(...ALERT_POLICY_FIELDS)}
        from probes p
        cross join alert_settings g
        left join project_alerts pa on pa.project = p.project
        where p.key = x.probe_key and x.asked
      ) pol on true
    )
    update probe_schedule s
    set next_due_at = case when calc.next_due_at is null then s.next_due_at
                           else least(calc.next_due_at, s.due_by) end,
        due_by = case when calc.next_due_at is null then s.due_by end,
        lease_until = case when ${manual} then s.lease_until end,
        leased_by = case when ${manual} then s.leased_by end,
        manual_run_at = case when ${manual} then null else s.manual_run_at end,
        last_run_at = greatest(calc.started_at, s.last_run_at),
        last_outcome = case when calc.started_at >= s.last_run_at or s.last_run_at is null
                            then coalesce(calc.outcome, s.last_outcome)
                            else s.last_outcome end,
        state = calc.new_state,
        state_since = case when calc.new_state <> calc.old_state then calc.started_at
                           else s.state_since end,
        fail_streak = calc.new_fail,
        pass_streak = calc.new_pass
    from calc
    where s.probe_key = calc.probe_key and s.location = ${location}
    returning s.probe_key, calc.counted, calc.old_state, s.state, s.fail_streak, calc.passing,
      calc.started_at, calc.error, calc.project, calc.probe_id, calc.url, calc.label,
      calc.enabled, calc.targets, calc.reminder_minutes, calc.notify_degraded,
      calc.notify_recovered`.execute(trx);
  return changed;
}

/** The state change of a counted run on a probe that still exists. */
function stateChangeOf(r: SettledRow, run: SettledRun | null): StateChange {
  return {
    key: String(r.probe_key),
    from: r.old_state,
    to: r.state,
    passing: r.passing,
    startedAt: new Date(r.started_at!),
    error: r.error,
    httpStatus: run?.httpStatus ?? null,
    failedChecks: run?.failedChecks ?? null,
    failStreak: r.fail_streak,
    project: r.project!,
    probeId: r.probe_id!,
    url: r.url!,
    label: r.label,
    policy: {
      enabled: r.enabled!,
      targets: r.targets!,
      reminderMinutes: r.reminder_minutes!,
      notifyDegraded: r.notify_degraded!,
      notifyRecovered: r.notify_recovered!,
    },
  };
}

/**
 * Sets probes back to `unknown` with their streaks cleared: a probe whose URL or method changed
 * checks something else now, and one of a disabled project is not checked at all.
 */
export async function resetStates(
  trx: Db,
  where: { keys: readonly string[] } | { project: string },
  at: Date,
): Promise<void> {
  const keys = "keys" in where
    ? sql`select x.k from json_to_recordset(${json(where.keys.map((k) => ({ k })))})
            as x(k bigint)`
    : sql`select key from probes where project = ${where.project}`;
  await sql`
    with locked as (
      select probe_key, location from probe_schedule where probe_key in (${keys})
      order by probe_key, location for update
    )
    update probe_schedule s
    set state = 'unknown',
        state_since = case when s.state <> 'unknown' then ${at.toISOString()}::timestamptz
                           else s.state_since end,
        fail_streak = 0, pass_streak = 0
    from locked where s.probe_key = locked.probe_key and s.location = locked.location
      and (s.state <> 'unknown' or s.fail_streak <> 0 or s.pass_streak <> 0)`.execute(trx);
  // And the probe's own state (decided from its locations': docs/locations.md).
  await sql`
    update probe_verdicts v
    set state = 'unknown', stale_at = null, locations = null,
        state_since = case when v.state <> 'unknown' then ${at.toISOString()}::timestamptz
                           else v.state_since end
    where v.probe_key in (${keys}) and (v.state <> 'unknown' or v.stale_at is not null)`
    .execute(trx);
}
