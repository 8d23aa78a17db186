/**
 * Runner figures for a time range, for reports such as "I'm alive": how many runs were made
 * and how many failed, how late they started, and how many probes are overdue now. Read from
 * raw results, so `since` should lie within RESULTS_RETENTION_DAYS.
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";

export interface RunnerFigures {
  /** The range covered, ISO times: `since` included, `until` excluded. */
  since: string;
  until: string;
  /** Runs recorded in the range (by start time). */
  runs: number;
  /** Runs that were `down` or `blocked`. */
  failures: number;
  outcomes: { up: number; degraded: number; down: number; blocked: number };
  /** How late runs started (start minus due time), in ms; null without runs. */
  slip: { p50: number; p99: number; max: number } | null;
  /** Probes of enabled projects now, and those whose run is overdue by more than `overdueMs`. */
  probes: { scheduled: number; overdue: number };
}

/**
 * Figures for runs started in `[since, until)`. `overdueMs` (default 60 s) is how late a due
 * run, not yet claimed by any runner, must be to count as overdue at `until`.
 *
 * @example
 * ```ts ignore
 * const day = await runnerFigures({ db, since: new Date(Date.now() - 86_400_000) });
 * console.log(`${day.runs} runs, ${day.failures} failed, p99 slip ${day.slip?.p99} ms`);
 * ```
 */
export async function runnerFigures(
  { db, since, until = new Date(), overdueMs = 60_000 }: {
    db: Db;
    since: Date;
    until?: Date;
    overdueMs?: number;
  },
): Promise<RunnerFigures> {
  const { rows: [runs] } = await sql<{
    up: number;
    degraded: number;
    down: number;
    blocked: number;
    p50: number | null;
    p99: number | null;
    max: number | null;
  }>`
    select count(*) filter (where outcome = 'up')::int as up,
           count(*) filter (where outcome = 'degraded')::int as degraded,
           count(*) filter (where outcome = 'down')::int as down,
           count(*) filter (where outcome = 'blocked')::int as blocked,
           percentile_disc(0.5) within group (order by slip) as p50,
           percentile_disc(0.99) within group (order by slip) as p99,
           max(slip) as max
    from (
      select outcome,
             greatest(0, round(extract(epoch from (started_at - due_at)) * 1000))::int as slip
      from probe_results
      where started_at >= ${since} and started_at < ${until}
    ) r`.execute(db);
  const probes = await scheduleFigures({ db, at: until, overdueMs });
  const outcomes = {
    up: runs.up,
    degraded: runs.degraded,
    down: runs.down,
    blocked: runs.blocked,
  };
  const total = outcomes.up + outcomes.degraded + outcomes.down + outcomes.blocked;
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    runs: total,
    failures: outcomes.down + outcomes.blocked,
    outcomes,
    slip: total === 0 ? null : {
      p50: Number(runs.p50),
      p99: Number(runs.p99),
      max: Number(runs.max),
    },
    probes,
  };
}

/**
 * Probes of enabled projects scheduled at the built-in location at `at`, and those whose run, not claimed by any runner, is overdue
 * by more than `overdueMs` (default 60 s). Read by the I'm alive report and by `/metrics`. A run
 * given back for its host's cap (a lease with no runner named) is not claimed: it counts.
 */
export async function scheduleFigures(
  { db, at = new Date(), overdueMs = 60_000 }: { db: Db; at?: Date; overdueMs?: number },
): Promise<RunnerFigures["probes"]> {
  const { rows: [probes] } = await sql<{ scheduled: number; overdue: number }>`
    select count(*)::int as scheduled,
           count(*) filter (
             where s.next_due_at < ${new Date(at.getTime() - overdueMs)}
               and (s.leased_by is null or s.lease_until < ${at})
           )::int as overdue
    from probe_schedule s
    join probes p on p.key = s.probe_key
    join projects pr on pr.name = p.project
    where pr.status = 'enabled' and s.location = ''`.execute(db);
  return { scheduled: probes.scheduled, overdue: probes.overdue };
}
