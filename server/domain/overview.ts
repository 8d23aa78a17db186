/**
 * The dashboard's overview: every project with every probe (state, last run, uptime over 24 hours,
 * 7 and 30 days, p95 latency over 24 hours, an hourly sparkline) and the open incidents, in one
 * read. A handful of set-based statements over all the probes at once, never one per probe:
 * 1,000 probes cost what 10 do, plus the rows they read.
 *
 * Counts follow `countsSince` (`results.ts`): hourly rollups for the whole hours of a window, raw
 * results for the part of its first hour inside it; runs in maintenance windows and runs the network
 * policy refused (`blocked`) are left out. A probe's figures count the runs of all its locations
 * together (docs/runner.md, "Results").
 * Latency comes from the hourly histograms (plus the raw results of that first part hour), so
 * `p95_24h` is an estimate within a histogram bucket's width (see `domain/histogram.ts`): exact
 * percentiles over every raw result of 1,000 probes would sort over a million rows a call.
 *
 * @module
 */
import {
  type Incident,
  type Outcome,
  type Overview,
  type OverviewProbe,
  type OverviewProject,
  STATS_WINDOW_MS,
} from "@probe/shared";
import { sql } from "kysely";
import { type Db, withBudget } from "../storage/database.ts";
import type { ProbeState } from "../storage/schema.ts";
import { BUCKET_BOUNDS, emptyHistogram, percentileOf } from "./histogram.ts";
import { OVERLOAD_LAG_MS, scheduleLag } from "./schedule_lag.ts";
import { notFound } from "./errors.ts";
import { listIncidents } from "./incidents.ts";
import { ceilHour } from "./results.ts";
import { recentRuns } from "./recent_runs.ts";
import { answeredRun } from "./answered.ts";
import { among, type Visible } from "./visible.ts";

const HOUR_MS = 3_600_000;
/** Hours in the sparkline: the current one and the 23 before it. */
export const SPARKLINE_HOURS = 24;
/** Open incidents the overview lists at most. */
export const OVERVIEW_INCIDENTS = 100;

/** Down first, then degraded, unknown, up. */
const STATE_ORDER: Record<ProbeState, number> = { down: 0, degraded: 1, unknown: 2, up: 3 };

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
const ratio = (good: number, runs: number) => (runs === 0 ? null : good / runs);

/**
 * `width_bucket` thresholds that give a latency's histogram bucket (0-based) as `bucketOf` does:
 * bucket i holds latencies up to BUCKET_BOUNDS[i] ms inclusive, and latencies are whole ms.
 */
export const BUCKET_THRESHOLDS = sql.raw(
  `array[${BUCKET_BOUNDS.filter(Number.isFinite).map((b) => b + 1).join(",")}]::int[]`,
);

/**
 * Which probes a statement reads: every probe, or those of some projects (one, or those a scoped
 * caller sees). As `= any(array(…))`, so that the planner reads each probe's rows by its index
 * instead of the window's rows of all.
 */
const scopeOf = (only: Visible) =>
  only === undefined
    ? sql`true`
    : sql`x.probe_key = any(array(select key from probes where ${among("project", only)}))`;

interface Windowed {
  good_24h: number;
  runs_24h: number;
  good_7d: number;
  runs_7d: number;
  good_30d: number;
  runs_30d: number;
  /** The oldest run counted: its hour's start from a rollup, its time from a raw result. */
  oldest: Date | string | null;
}

/**
 * Passing and counted runs per probe over the last 24 hours, 7 and 30 days, and the oldest of
 * them, in one pass over the rollups of 30 days. A raw result counts only for the window whose first, partial hour it lies
 * in; every other window counts its hour through the rollup.
 */
async function uptimeCounts(
  db: Db,
  only: Visible,
  now: number,
): Promise<Map<string, Windowed>> {
  const edgeNow = ceilHour(now);
  const at = (ms: number) => new Date(ms);
  const w = (name: "24h" | "7d" | "30d") => ({
    since: at(now - STATS_WINDOW_MS[name]),
    edge: at(edgeNow - STATS_WINDOW_MS[name]),
  });
  const [d, wk, m] = [w("24h"), w("7d"), w("30d")];
  const scope = scopeOf(only);
  const partOf = (win: { since: Date; edge: Date }) =>
    sql`(x.started_at >= ${win.since} and x.started_at < ${win.edge})`;
  const { rows } = await sql<{ probe_key: string | number } & Windowed>`
    select probe_key,
      coalesce(sum(good) filter (where in_24h), 0)::int as good_24h,
      coalesce(sum(runs) filter (where in_24h), 0)::int as runs_24h,
      coalesce(sum(good) filter (where in_7d), 0)::int as good_7d,
      coalesce(sum(runs) filter (where in_7d), 0)::int as runs_7d,
      coalesce(sum(good) filter (where in_30d), 0)::int as good_30d,
      coalesce(sum(runs) filter (where in_30d), 0)::int as runs_30d,
      min(at) filter (where runs > 0) as oldest
    from (
      select x.probe_key, x.hour >= ${d.edge} as in_24h, x.hour >= ${wk.edge} as in_7d,
             true as in_30d, x.up + x.degraded as good,
             x.up + x.degraded + x.down as runs, x.hour as at
      from probe_rollups x
      where ${scope} and x.hour >= ${m.edge}
      union all
      select x.probe_key, ${partOf(d)}, ${partOf(wk)}, ${partOf(m)},
             (x.outcome in ('up', 'degraded'))::int, 1, x.started_at
      from probe_results x
      where ${scope} and not x.in_maintenance and x.outcome <> 'blocked'
        and (${partOf(d)} or ${partOf(wk)} or ${partOf(m)})
    ) c
    group by probe_key`.execute(db);
  return new Map(rows.map(({ probe_key, ...counts }) => [String(probe_key), counts]));
}

/**
 * Per probe, the uptime of each of the sparkline's hours (from `first`): the runs of every
 * location the probe ran from that hour counted together (a rollup row is one location's hour),
 * as `uptime_24h` counts them. One row per probe, its hours in arrays: a twentieth of the rows
 * that one per probe and hour would be.
 */
async function sparklines(db: Db, only: Visible, first: number) {
  const { rows } = await sql<{
    probe_key: string | number;
    hours: number[];
    good: number[];
    runs: number[];
  }>`
    select probe_key, array_agg(hour) as hours, array_agg(good) as good, array_agg(runs) as runs
    from (
      select x.probe_key,
        (extract(epoch from x.hour - ${new Date(first)}::timestamptz) / 3600)::int as hour,
        sum(x.up + x.degraded)::int as good, sum(x.up + x.degraded + x.down)::int as runs
      from probe_rollups x
      where ${scopeOf(only)} and x.hour >= ${new Date(first)}
      group by x.probe_key, x.hour
    ) h
    group by probe_key`.execute(db);
  const byProbe = new Map<string, (number | null)[]>();
  for (const r of rows) {
    const line = new Array(SPARKLINE_HOURS).fill(null);
    r.hours.forEach((hour, i) => {
      if (hour < SPARKLINE_HOURS) line[hour] = ratio(r.good[i], r.runs[i]);
    });
    byProbe.set(String(r.probe_key), line);
  }
  return byProbe;
}

/**
 * Per probe, the estimated p95 latency (ms) over the last 24 hours: the hourly histograms of the
 * whole hours merged in SQL, with the raw results of the first, partial hour bucketed the same
 * way; the maximum bounds the estimate.
 */
async function latency24h(db: Db, only: Visible, now: number) {
  const since = now - STATS_WINDOW_MS["24h"];
  const edge = new Date(ceilHour(since));
  const scope = scopeOf(only);
  const { rows } = await sql<
    { probe_key: string | number; bucket: number; n: number; top: number }
  >`
    select probe_key, bucket, sum(n)::int as n, max(top) as top
    from (
      select x.probe_key, (t.i - 1)::int as bucket, t.n, x.latency_max as top
      from probe_rollups x
      cross join lateral unnest(x.latency_buckets) with ordinality as t(n, i)
      where ${scope} and x.hour >= ${edge} and t.n > 0
      union all
      select x.probe_key, width_bucket(x.duration_ms, ${BUCKET_THRESHOLDS}), 1, x.duration_ms
      from probe_results x
      where ${scope} and x.started_at >= ${new Date(since)} and x.started_at < ${edge}
        and ${answeredRun("x")}
    ) h
    group by probe_key, bucket`.execute(db);
  const histograms = new Map<string, { histogram: number[]; max: number }>();
  for (const r of rows) {
    const key = String(r.probe_key);
    let h = histograms.get(key);
    if (!h) histograms.set(key, h = { histogram: emptyHistogram(), max: 0 });
    h.histogram[r.bucket] += r.n;
    h.max = Math.max(h.max, r.top);
  }
  const p95 = new Map<string, number | null>();
  for (const [key, { histogram, max }] of histograms) {
    p95.set(key, percentileOf(histogram, 0.95, max));
  }
  return p95;
}

/**
 * Per probe whose last run (of any location) was refused by the network policy, that run's
 * reason: the error of the newest `blocked` run each location's schedule row last saw, the newest
 * location first. Reads only the rows whose last outcome is `blocked`.
 */
async function blockedReasons(db: Db, only: Visible) {
  const { rows } = await sql<{ probe_key: string | number; error: string | null }>`
    select distinct on (x.probe_key) x.probe_key, r.error
    from probe_schedule x
    join probe_results r on r.probe_key = x.probe_key and r.location = x.location
      and r.started_at = x.last_run_at and r.outcome = 'blocked'
    where ${scopeOf(only)} and x.last_outcome = 'blocked'
    order by x.probe_key, x.last_run_at desc`.execute(db);
  return new Map(rows.map((r) => [String(r.probe_key), r.error ?? "blocked"]));
}

/**
 * When a probe's history starts: its oldest counted run's hour (from the rollups), or its
 * creation when that falls inside that hour (a probe created at 10:45 has no history from
 * 10:00); null without runs.
 */
function historySince(oldest: Date | string | null, created: Date | string): string | null {
  if (oldest === null) return null;
  const [from, made] = [new Date(oldest).getTime(), new Date(created).getTime()];
  return new Date(made > from && made < from + HOUR_MS ? made : from).toISOString();
}

interface ProbeRow {
  key: string | number;
  project: string;
  probe_id: string;
  label: string | null;
  url: string;
  method: string;
  created_at: Date;
  state: ProbeState | null;
  state_since: Date | string | null;
  flapping_since: Date | string | null;
  last_outcome: OverviewProbe["last_outcome"];
  last_run_at: Date | string | null;
}

/** Down first, then degraded, unknown, up; then by label (or URL, without one); then by id. */
function byStateThenName(a: OverviewProbe, b: OverviewProbe): number {
  const state = STATE_ORDER[a.state] - STATE_ORDER[b.state];
  if (state !== 0) return state;
  const [na, nb] = [a.label ?? a.url, b.label ?? b.url];
  if (na !== nb) return na < nb ? -1 : 1;
  return a.probe_id < b.probe_id ? -1 : a.probe_id > b.probe_id ? 1 : 0;
}

/**
 * The overview at `now`: every project (or the one named; 404 when it does not exist; only the
 * `visible` ones when given) by name, each with its probes, down first; the open incidents,
 * newest first (at most 100). Read in one repeatable-read transaction, so that every part is of
 * the same moment; the whole service's on the `overview` budget's connections (`BUDGETS`).
 */
export function getOverview(
  { db, project, visible, now = Date.now() }: {
    db: Db;
    project?: string;
    visible?: Visible;
    now?: number;
  },
): Promise<{ data: Overview; meta: { projects: number; probes: number; generated_at: string } }> {
  // The whole service's overview reads every probe's month: it has a budget of its own.
  const reader = project === undefined ? withBudget(db, "overview") : db;
  // The projects read: the one named (a scoped caller names only one it sees), or the visible.
  const only = project !== undefined ? [project] : visible;
  return reader.transaction().setIsolationLevel("repeatable read").execute(async (trx) => {
    let projectsQuery = trx.selectFrom("projects").select(["name", "label", "status"]);
    if (only !== undefined) projectsQuery = projectsQuery.where(among("name", only));
    const projects = await projectsQuery.orderBy(sql`name collate "C"`).execute();
    if (project !== undefined && projects.length === 0) throw notFound("Project");

    let probesQuery = trx.selectFrom("probes")
      .leftJoin("probe_verdicts", "probe_verdicts.probe_key", "probes.key")
      .select([
        "probes.key",
        "probes.project",
        "probes.probe_id",
        "probes.label",
        "probes.url",
        "probes.method",
        sql<Date>`probes.created_at`.as("created_at"),
        "probe_verdicts.state",
        "probe_verdicts.state_since",
        "probe_verdicts.flapping_since",
        sql<Outcome | null>`(select s.last_outcome from probe_schedule s
          where s.probe_key = probes.key and s.last_run_at is not null
          order by s.last_run_at desc limit 1)`.as("last_outcome"),
        sql<Date | null>`(select max(s.last_run_at) from probe_schedule s
          where s.probe_key = probes.key)`.as("last_run_at"),
      ]);
    if (only !== undefined) probesQuery = probesQuery.where(among("probes.project", only));
    const probes: ProbeRow[] = await probesQuery.execute();

    const firstHour = Math.floor(now / HOUR_MS) * HOUR_MS - (SPARKLINE_HOURS - 1) * HOUR_MS;
    const counts = await uptimeCounts(trx, only, now);
    const lines = await sparklines(trx, only, firstHour);
    const p95 = await latency24h(trx, only, now);
    const blocked = await blockedReasons(trx, only);
    const recent = await recentRuns(trx, only, now);
    const lag = await scheduleLag({ db: trx, at: new Date(now) });
    const incidents: Incident[] = (await listIncidents({
      db: trx,
      input: { project, state: "open", limit: OVERVIEW_INCIDENTS },
      visible,
    })).data;

    const byProject = new Map<string, OverviewProbe[]>(projects.map((p) => [p.name, []]));
    for (const p of probes) {
      const key = String(p.key);
      const c = counts.get(key);
      byProject.get(p.project)?.push({
        probe_id: p.probe_id,
        label: p.label,
        url: p.url,
        method: p.method,
        state: p.state ?? "unknown",
        state_since: iso(p.state_since),
        ...(p.flapping_since !== null && { flapping: true as const }),
        last_outcome: p.last_outcome,
        last_run_at: iso(p.last_run_at),
        blocked_reason: p.last_outcome === "blocked" ? blocked.get(key) ?? "blocked" : null,
        uptime_24h: c ? ratio(c.good_24h, c.runs_24h) : null,
        uptime_7d: c ? ratio(c.good_7d, c.runs_7d) : null,
        uptime_30d: c ? ratio(c.good_30d, c.runs_30d) : null,
        p95_24h: p95.get(key) ?? null,
        sparkline: lines.get(key) ?? new Array(SPARKLINE_HOURS).fill(null),
        history_since: historySince(c?.oldest ?? null, p.created_at),
        recent_runs: recent.get(key)?.runs ?? [],
        last_duration_ms: recent.get(key)?.lastDurationMs ?? null,
      });
    }
    const data: OverviewProject[] = projects.map((p) => ({
      project: p.name,
      label: p.label,
      status: p.status,
      probes: byProject.get(p.name)!.sort(byStateThenName),
    }));
    return {
      data: {
        incidents,
        projects: data,
        schedule: {
          lag_seconds: Math.round(lag * 10) / 10,
          overloaded: lag * 1000 >= OVERLOAD_LAG_MS,
        },
      },
      meta: {
        projects: data.length,
        probes: probes.length,
        generated_at: new Date(now).toISOString(),
      },
    };
  });
}
