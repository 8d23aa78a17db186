/**
 * The runner's database work: schedule rows for new probes, claiming due probes with row locks,
 * and recording finished runs (raw result, hourly rollup, next due time) in one transaction.
 * Several runners on one PostgreSQL share the schedule through these statements alone.
 *
 * Batches travel as one JSON parameter read with `json_to_recordset`: the same SQL then works
 * on postgres.js and PGlite, which encode array parameters differently.
 *
 * On PostgreSQL each runs on the runner's own connections, with the runner's budget
 * (`BUDGETS.runner`), not with the query deadline of requests: `withBudget`.
 *
 * @module
 */
import { compareKeys } from "../storage/keys.ts";
import { type RawBuilder, sql } from "kysely";
import { type Db, withBudget } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import {
  DEFAULT_LOCAL_LOCATION,
  type Outcome,
  PROBE_INTERVAL_SECONDS,
  PROBE_TIMEOUT_MS,
  type ProbeExpect,
} from "@probe/shared";
import type { ProbeTarget, RunResult } from "./execute.ts";
import { isAnsweredRun } from "../domain/answered.ts";
import { decideVerdicts } from "../alerting/verdicts.ts";
import { settleSchedule } from "../alerting/states.ts";
import { bucketOf, emptyHistogram } from "../domain/histogram.ts";
import { gridAfter, multiplierFor, offsetOf } from "../domain/schedule.ts";
import { effectiveLocationsSql, LOCAL } from "../domain/locations.ts";

const HOUR_MS = 3_600_000;

const iso = (ms: number) => new Date(ms).toISOString();

/** A probe's internal key as text: postgres.js reads bigint as a string, PGlite as a number. */
export const keyText = (key: number | string | bigint) => String(key);

/**
 * Gives every probe a schedule row for each location it runs from (its own `locations`, or its
 * project's default) that has none: every location's, not only this runner's, so that remote
 * locations' runs are due too. New rows are due at once (`first: "now"`, so a new probe shows a
 * result within seconds), or at their next slot on the grid (`"grid"`).
 */
export async function syncSchedules(
  database: Db,
  { now, intervalMs, first = "now", batch = 5000 }: {
    now: number;
    /** The service-wide interval: for probes without their own (`interval_seconds`). */
    intervalMs: number;
    first?: "now" | "grid";
    batch?: number;
  },
): Promise<number> {
  const db = withBudget(database, "runner");
  let added = 0;
  for (;;) {
    const { rows: missing } = await sql<
      { key: number | string; location: string; interval_seconds: number | null }
    >`
      select p.key, l.location, p.interval_seconds
      from probes p
      join projects pr on pr.name = p.project
      cross join lateral unnest(${effectiveLocationsSql("p", "pr")}) as l(location)
      where not exists (
        select 1 from probe_schedule s where s.probe_key = p.key and s.location = l.location
      )
      order by p.key, l.location
      limit ${batch}`.execute(db);
    if (missing.length === 0) return added;
    const rows = missing.map(({ key, location, interval_seconds }) => {
      const ms = interval_seconds === null ? intervalMs : interval_seconds * 1000;
      return {
        probe_key: keyText(key),
        location,
        next_due_at: iso(first === "now" ? now : gridAfter(now, offsetOf(key, ms), ms)),
      };
    });
    try {
      // Only probes that still exist: one deleted meanwhile is simply left out. Inserted in key
      // order, so that the foreign key checks lock the probes in the order a project delete
      // does (see `deleteProject`), and the two cannot deadlock.
      const result = await sql`
        insert into probe_schedule (probe_key, location, next_due_at)
        select x.probe_key, x.location, x.next_due_at
        from json_to_recordset(${json(rows)})
          as x(probe_key bigint, location text, next_due_at timestamptz)
        where exists (select 1 from probes p where p.key = x.probe_key)
        order by x.probe_key, x.location
        on conflict (probe_key, location) do nothing`.execute(db);
      added += Number(result.numAffectedRows ?? 0);
    } catch (error) {
      // A probe deleted between the check and the insert: the next round settles it.
      if ((error as { code?: unknown })?.code === "23503") return added;
      throw error;
    }
    if (missing.length < batch) return added;
  }
}

/** The defaults of `PROBE_INTERVAL_SECONDS` and `PROBE_TIMEOUT_MS`, in ms. */
const SERVICE_DEFAULTS = {
  intervalMs: PROBE_INTERVAL_SECONDS.default * 1000,
  timeoutMs: PROBE_TIMEOUT_MS.default,
};

/** A due probe claimed by a runner, with what it needs to run it. */
export interface Claimed {
  key: string;
  /** When this run is due (ms). */
  due: number;
  /** False when the project is disabled: the run is skipped, not made. */
  enabled: boolean;
  /** Whether the run falls in a maintenance window of its project (decided at the claim). */
  inMaintenance: boolean;
  /** The probe's interval (ms): its own `interval_seconds`, or the service-wide one. */
  intervalMs: number;
  /** The probe's timeout (ms): its own `timeout_ms`, or the service-wide one. */
  timeoutMs: number;
  /** What to run; its `timeoutMs` is this run's. */
  target: ProbeTarget & { timeoutMs: number };
}

/**
 * Claims up to `limit` probes due by `horizon` whose lease is free or expired, and leases them
 * to `runner` until `leaseUntil`. `FOR UPDATE SKIP LOCKED` lets runners claim side by side
 * without waiting for each other and without claiming the same row twice.
 */
export async function claimDue(
  database: Db,
  {
    now,
    horizon,
    leaseUntil,
    runner,
    limit,
    spread,
    defaults = SERVICE_DEFAULTS,
    location = LOCAL,
  }: {
    /** The location whose runs to claim: '' (the default) for the built-in one. */
    location?: string;
    now: number;
    horizon: number;
    leaseUntil: number;
    runner: string;
    limit: number;
    /**
     * Probes already due before `since` (the runner started after an outage) are claimed only
     * from `since` + their share of `spreadMs` (`restartDelay`), or, when the lease of a runner
     * that died was still on them, from that lease's end plus it: so they start spread rather
     * than all at once.
     */
    spread?: { since: number; spreadMs: number; intervalMs: number };
    /**
     * The service-wide interval and timeout (ms), for probes without their own; the defaults of
     * `PROBE_INTERVAL_SECONDS` and `PROBE_TIMEOUT_MS` unless given.
     */
    defaults?: { intervalMs: number; timeoutMs: number };
  },
): Promise<Claimed[]> {
  if (limit <= 0) return [];
  const db = withBudget(database, "runner");
  const spreadCondition = spread
    ? sql`and (next_due_at >= ${iso(spread.since)}::timestamptz
        or greatest(${iso(spread.since)}::timestamptz,
                    case when leased_by is not null then lease_until end)
           + (((probe_key % ${spread.intervalMs}::bigint)
               * ${multiplierFor(spread.intervalMs)}::bigint) % ${spread.intervalMs}::bigint)
             * ${spread.spreadMs / spread.intervalMs}::float8 * interval '1 millisecond'
           <= ${iso(horizon)}::timestamptz)`
    : sql``;
  const { rows } = await sql<{
    probe_key: number | string;
    next_due_at: Date;
    status: string;
    url: string;
    method: string;
    headers: Record<string, string>;
    body: unknown;
    latency: number | null;
    expect: ProbeExpect | null;
    interval_seconds: number | null;
    timeout_ms: number | null;
    in_maintenance: boolean;
  }>`
    with due as (
      select probe_key from probe_schedule
      where location = ${location} and next_due_at <= ${iso(horizon)}
        and (lease_until is null or lease_until < ${iso(now)})
        ${spreadCondition}
      order by next_due_at
      limit ${limit}
      for update skip locked
    ), claimed as (
      update probe_schedule s
      set lease_until = ${iso(leaseUntil)}, leased_by = ${runner}
      from due where s.probe_key = due.probe_key and s.location = ${location}
      returning s.probe_key, s.next_due_at
    )
    select c.probe_key, c.next_due_at, pr.status, p.url, p.method, p.headers, p.body, p.latency,
      p.expect, p.interval_seconds, p.timeout_ms,
      exists (
        select 1 from maintenance_windows w
        where w.project = p.project
          and w.starts_at <= greatest(c.next_due_at, ${iso(now)})
          and w.ends_at > greatest(c.next_due_at, ${iso(now)})
      ) as in_maintenance
    from claimed c
    join probes p on p.key = c.probe_key
    join projects pr on pr.name = p.project`.execute(db);
  return rows.map((r) => ({
    key: keyText(r.probe_key),
    due: new Date(r.next_due_at).getTime(),
    enabled: r.status === "enabled",
    inMaintenance: r.in_maintenance,
    intervalMs: r.interval_seconds === null ? defaults.intervalMs : r.interval_seconds * 1000,
    timeoutMs: r.timeout_ms ?? defaults.timeoutMs,
    target: {
      url: r.url,
      method: r.method,
      headers: r.headers,
      body: r.body,
      latency: r.latency,
      expect: r.expect,
      timeoutMs: r.timeout_ms ?? defaults.timeoutMs,
    },
  }));
}

/** A claimed run that is over: made (with its result) or skipped (project disabled). */
export interface Completed {
  key: string;
  due: number;
  nextDue: number;
  result: RunResult | null;
  inMaintenance?: boolean;
}

/** Per (probe, hour): counts and a latency histogram to add to the rollup row. */
function rollupRows(runs: readonly Run[]) {
  const rows = new Map<string, {
    probe_key: string;
    hour: string;
    counts: Record<Outcome, number>;
    maintenance: number;
    latency_count: number;
    latency_max: number | null;
    latency_buckets: number[];
  }>();
  for (const { key, result, inMaintenance } of runs) {
    const hour = Math.floor(result.startedAt.getTime() / HOUR_MS) * HOUR_MS;
    const id = `${key}@${hour}`;
    let row = rows.get(id);
    if (!row) {
      row = {
        probe_key: key,
        hour: iso(hour),
        counts: { up: 0, degraded: 0, down: 0, blocked: 0 },
        maintenance: 0,
        latency_count: 0,
        latency_max: null,
        latency_buckets: emptyHistogram(),
      };
      rows.set(id, row);
    }
    // Runs in maintenance are counted apart, out of the outcomes (and so out of uptime).
    if (inMaintenance) row.maintenance++;
    else row.counts[result.outcome]++;
    if (isAnsweredRun(result)) {
      row.latency_count++;
      row.latency_max = Math.max(row.latency_max ?? 0, result.durationMs);
      row.latency_buckets[bucketOf(result.durationMs)]++;
    }
  }
  // A fixed order, so that two runners touching the same rows cannot deadlock.
  return [...rows.values()]
    .sort((a, b) => compareKeys(a.probe_key, b.probe_key) || a.hour.localeCompare(b.hour))
    .map(({ counts, ...r }) => ({ ...r, ...counts }));
}

/**
 * Records finished runs in one transaction. The schedule row moves on only where this runner
 * still holds the lease for that very due time; a run whose lease was lost (it ran past the
 * lease and another runner took the probe over) is not recorded, so each due run is recorded
 * at most once. Returns how many were recorded and how many were dropped so.
 *
 * The schedule rows are locked first, in key order: the order in which a project delete locks
 * them (`deleteProject`), so that the two never deadlock. A run whose probe a delete removed
 * meanwhile finds no schedule row and counts as lost; every other one is recorded.
 */
export function recordRuns(
  db: Db,
  runner: string,
  completed: readonly Completed[],
  location = LOCAL,
  verdicts: Verdicts = DEFAULT_VERDICTS,
): Promise<{ recorded: number; skipped: number; lost: number }> {
  if (completed.length === 0) return Promise.resolve({ recorded: 0, skipped: 0, lost: 0 });
  return withBudget(db, "runner").transaction().execute(async (trx) => {
    const { recorded, skipped, lost } = await recordRunsIn(
      trx,
      runner,
      completed,
      location,
      verdicts,
    );
    return { recorded: recorded.size, skipped, lost };
  });
}

/**
 * `recordRuns` inside the caller's transaction: returns the keys of the runs recorded, and how
 * many were skipped (project disabled) and lost (lease gone).
 */
export async function recordRunsIn(
  trx: Db,
  runner: string,
  completed: readonly Completed[],
  location = LOCAL,
  verdicts: Verdicts = DEFAULT_VERDICTS,
): Promise<{ recorded: Set<string>; skipped: number; lost: number }> {
  const sorted = [...completed].sort((a, b) => compareKeys(a.key, b.key));
  const { settled, changes } = await settleSchedule(
    trx,
    sorted.map((c) => ({
      key: c.key,
      dueAt: new Date(c.due),
      nextDueAt: new Date(c.nextDue),
      run: c.result,
      counted: !c.inMaintenance,
    })),
    { runner },
    location,
  );
  const runs = sorted.flatMap((c) =>
    c.result && settled.has(c.key)
      ? [{ key: c.key, due: c.due, result: c.result, inMaintenance: c.inMaintenance ?? false }]
      : []
  );
  await insertRuns(trx, runner, runs, location);
  // Each location's row moved its own state; the probe's is decided from them all.
  await decideVerdicts(trx, changes.map((c) => c.key), {
    ...verdicts,
    now: new Date(),
    triggers: new Map(changes.map((c) => [c.key, c])),
  });
  const skipped = sorted.filter((c) => !c.result && settled.has(c.key)).length;
  return {
    recorded: new Set(runs.map((r) => r.key)),
    skipped,
    lost: completed.length - settled.size,
  };
}

/**
 * What deciding probes' states by quorum needs beyond the runs: the built-in location's name (as
 * messages name it) and the service-wide interval (stale locations).
 */
export interface Verdicts {
  localName: string;
  intervalMs: number;
}

export const DEFAULT_VERDICTS: Verdicts = {
  localName: DEFAULT_LOCAL_LOCATION,
  intervalMs: PROBE_INTERVAL_SECONDS.default * 1000,
};

/** A finished run to store. */
export interface Run {
  key: string;
  due: number;
  result: RunResult;
  trigger?: "schedule" | "manual";
  inMaintenance?: boolean;
}

/** A run's result as a stored row and an answer show it (`probe_results`, `ProbeResult`). */
export function resultFields(result: RunResult) {
  return {
    started_at: result.startedAt.toISOString(),
    duration_ms: Math.round(result.durationMs),
    outcome: result.outcome,
    http_status: result.httpStatus,
    error: result.error,
    address: result.address,
    failed_checks: result.failedChecks ?? null,
  };
}

/**
 * Stores runs: their raw results, and their counts and latencies added to the hourly rollups.
 * Call inside the transaction that moved their schedule rows on (`recordRuns` does).
 */
export async function insertRuns(
  db: Db,
  runner: string,
  runs: readonly Run[],
  location = LOCAL,
): Promise<void> {
  if (runs.length === 0) return;
  const [results, rollups] = runInserts(runner, runs, location);
  await results.execute(db);
  await rollups.execute(db);
}

/** A rollup's latency histogram and the one of the runs added to it, summed bucket by bucket. */
const mergedBuckets = sql`array(
  select coalesce(a, 0) + coalesce(b, 0)
  from unnest(r.latency_buckets, excluded.latency_buckets) with ordinality as t(a, b, i)
  order by i
)`;

/**
 * The same sum when the runs added hold one latency (their histogram is zeros and a 1), as most
 * rows do (one run per probe and hour in a batch): that bucket is raised by one, without the
 * subquery of {@link mergedBuckets}, which was most of the rollups' cost a batch of pings.
 */
const bumpedBucket = sql`r.latency_buckets[:array_position(excluded.latency_buckets, 1) - 1]
  || (coalesce(r.latency_buckets[array_position(excluded.latency_buckets, 1)], 0) + 1)
  || r.latency_buckets[array_position(excluded.latency_buckets, 1) + 1:]`;

/**
 * The two statements of {@link insertRuns} (results, then rollups), unrun: a caller may send them
 * as parts of a statement of its own (data-modifying `WITH` parts) to spare the round trips.
 * `runs` must not be empty.
 */
export function runInserts(
  runner: string,
  runs: readonly Run[],
  location = LOCAL,
): [RawBuilder<unknown>, RawBuilder<unknown>] {
  const resultRows = runs.map(({ key, due, result, trigger, inMaintenance }) => ({
    probe_key: key,
    due_at: iso(due),
    ...resultFields(result),
    trigger: trigger ?? "schedule",
    in_maintenance: inMaintenance ?? false,
  }));
  const results = sql`
      insert into probe_results
        (probe_key, due_at, started_at, duration_ms, outcome, http_status, error, address, runner,
         location, failed_checks, trigger, in_maintenance)
      select x.probe_key, x.due_at, x.started_at, x.duration_ms, x.outcome, x.http_status,
             x.error, x.address, ${runner}, ${location}, x.failed_checks, x.trigger,
             x.in_maintenance
      from json_to_recordset(${json(resultRows)})
        as x(probe_key bigint, due_at timestamptz, started_at timestamptz, duration_ms integer,
             outcome text, http_status integer, error text, address text, failed_checks json,
             trigger text, in_maintenance boolean)`;
  const rollups = sql`
      insert into probe_rollups as r
        (probe_key, location, hour, up, degraded, down, blocked, maintenance, latency_count,
         latency_max, latency_buckets)
      select x.probe_key, ${location}, x.hour, x.up, x.degraded, x.down, x.blocked, x.maintenance,
             x.latency_count, x.latency_max, x.latency_buckets
      from json_to_recordset(${json(rollupRows(runs))})
        as x(probe_key bigint, hour timestamptz, up integer, degraded integer, down integer,
             blocked integer, maintenance integer, latency_count integer, latency_max integer,
             latency_buckets integer[])
      on conflict (probe_key, location, hour) do update set
        up = r.up + excluded.up,
        maintenance = r.maintenance + excluded.maintenance,
        degraded = r.degraded + excluded.degraded,
        down = r.down + excluded.down,
        blocked = r.blocked + excluded.blocked,
        latency_count = r.latency_count + excluded.latency_count,
        latency_max = greatest(r.latency_max, excluded.latency_max),
        latency_buckets = case
          when cardinality(r.latency_buckets) is distinct from cardinality(excluded.latency_buckets)
            then ${mergedBuckets}
          when excluded.latency_count = 0 then r.latency_buckets
          when excluded.latency_count = 1 then ${bumpedBucket}
          else ${mergedBuckets}
        end`;
  return [results, rollups];
}

/**
 * The schedule rows of `keys` at `location` that `runner` holds, locked in key order: a
 * `locked` CTE.
 */
function lockedLeases(runner: string, keys: readonly string[], location: string) {
  const wanted = json(keys.map((k) => ({ k })));
  return sql`with locked as (
      select probe_key from probe_schedule
      where leased_by = ${runner} and location = ${location}
        and probe_key in (select x.k from json_to_recordset(${wanted}) as x(k bigint))
      order by probe_key for update
    )`;
}

/**
 * Extends this runner's leases on the given probes to `until` (ms), never shortening one: runs
 * that waited for a slot of their host start with a whole lease ahead. Rows locked in key order.
 */
export async function extendLeases(
  database: Db,
  runner: string,
  keys: readonly string[],
  until: number,
  location = LOCAL,
) {
  if (keys.length === 0) return;
  const db = withBudget(database, "runner");
  await sql`
    ${lockedLeases(runner, keys, location)}
    update probe_schedule s set lease_until = greatest(s.lease_until, ${iso(until)}::timestamptz)
    from locked where s.probe_key = locked.probe_key and s.location = ${location}
      and s.leased_by = ${runner}`.execute(db);
}

/**
 * Gives back leases on runs that were claimed but not started (the runner is stopping, or their
 * host is at its cap): claimable again at once, or from `until` (ms) with no runner named. The
 * rows are locked in key order, as everywhere else (see `recordRuns`).
 */
export async function releaseLeases(
  database: Db,
  runner: string,
  keys: readonly string[],
  until?: number,
  location = LOCAL,
) {
  if (keys.length === 0) return;
  const db = withBudget(database, "runner");
  await sql`
    ${lockedLeases(runner, keys, location)}
    update probe_schedule s
    set lease_until = ${until === undefined ? null : iso(until)}::timestamptz, leased_by = null
    from locked where s.probe_key = locked.probe_key and s.location = ${location}
      and s.leased_by = ${runner}`.execute(db);
}
