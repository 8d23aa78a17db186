/**
 * Reading results back: a probe's history page by page, its statistics over a window, and a
 * project's status board. Counts come from hourly rollups for whole hours and from raw results
 * for the part of the first hour inside the window, so they are exact while raw results are
 * kept, and still answer (in whole hours) after they are pruned.
 *
 * @module
 */
import {
  type Outcome,
  type ProbeResult,
  type ProbeStats,
  type ProbeStatsInput,
  type ProbeStatus,
  type ResultsListInput,
  STATS_WINDOW_MS,
} from "@probe/shared";
import { type RawBuilder, sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { notFound } from "./errors.ts";
import { answeredRun } from "./answered.ts";
import { addInto, bucketOf, emptyHistogram, percentileOf } from "./histogram.ts";
import { localNameOf, type LocationNames, shownLocation, storedLocation } from "./locations.ts";

const HOUR_MS = 3_600_000;
type Reader = Db;

/**
 * Runs per outcome, and the runs in maintenance apart (in no outcome, so not in uptime). Blocked
 * runs (the network policy refused the target: it was never tried) have a count of their own and
 * are in neither `runs` nor uptime.
 */
type Counts = Record<Outcome | "maintenance", number>;
const noCounts = (): Counts => ({ up: 0, degraded: 0, down: 0, blocked: 0, maintenance: 0 });
const total = (c: Counts) => c.up + c.degraded + c.down;
const uptimeOf = (c: Counts) => (total(c) === 0 ? null : (c.up + c.degraded) / total(c));
const isoOrNull = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

async function probeKeyOf(db: Reader, project: string, probeId: string): Promise<string> {
  const row = await db.selectFrom("probes").select("key")
    .where("project", "=", project).where("probe_id", "=", probeId).executeTakeFirst();
  if (!row) throw notFound("Probe");
  return String(row.key);
}

/** The stored form of a `?location=` filter; undefined: every location. */
export const locationOf = (location: string | undefined, names?: LocationNames) =>
  location === undefined ? undefined : storedLocation(location, localNameOf(names));

/** `and <column> = <location>` for one location's rows; nothing for every location's. */
const atLocation = (column: string, location: string | undefined) =>
  location === undefined ? sql`` : sql`and ${sql.ref(column)} = ${location}`;

/**
 * A probe's results, newest first, `limit` at a time, older than `before` when given, of one
 * location when `input.location` names one.
 */
export async function listResults(
  { db, input, names }: { db: Db; input: ResultsListInput; names?: LocationNames },
): Promise<{ data: ProbeResult[]; meta: { count: number; next_before: string | null } }> {
  const key = await probeKeyOf(db, input.project, input.probeId);
  const local = localNameOf(names);
  const location = locationOf(input.location, names);
  let query = db.selectFrom("probe_results")
    .select([
      "started_at",
      "duration_ms",
      "outcome",
      "http_status",
      "error",
      "address",
      "failed_checks",
      "location",
      "trigger",
      "in_maintenance",
    ])
    .where("probe_key", "=", key);
  if (location !== undefined) query = query.where("location", "=", location);
  if (input.before !== undefined) query = query.where("started_at", "<", new Date(input.before));
  const rows = await query.orderBy("started_at", "desc").orderBy("id", "desc")
    .limit(input.limit).execute();
  const data = rows.map((r) => ({
    ...r,
    started_at: new Date(r.started_at).toISOString(),
    failed_checks: r.failed_checks as ProbeResult["failed_checks"],
    location: shownLocation(r.location, local),
  }));
  const next_before = data.length === input.limit ? data[data.length - 1].started_at : null;
  return { data, meta: { count: data.length, next_before } };
}

/** The first whole hour at or after `since`. */
export const ceilHour = (since: number) => Math.ceil(since / HOUR_MS) * HOUR_MS;

/**
 * Counts per outcome since `since`, per probe, for one probe or every probe of a project:
 * rollups for the hours from the first whole one on, raw results before it.
 */
async function countsSince(
  db: Reader,
  scope: { key: string } | { project: string },
  since: number,
  location?: string,
): Promise<Map<string, Counts>> {
  const edge = new Date(ceilHour(since));
  const inScope = "key" in scope
    ? sql`x.probe_key = ${scope.key}`
    : sql`x.probe_key in (select key from probes where project = ${scope.project})`;
  const { rows } = await sql<{ probe_key: string | number } & Counts>`
    select probe_key, sum(up)::int as up, sum(degraded)::int as degraded,
           sum(down)::int as down, sum(blocked)::int as blocked,
           sum(maintenance)::int as maintenance
    from (
      select x.probe_key, x.up, x.degraded, x.down, x.blocked, x.maintenance
      from probe_rollups x where ${inScope} and x.hour >= ${edge} ${
    atLocation("x.location", location)
  }
      union all
      select x.probe_key,
             (x.outcome = 'up' and not x.in_maintenance)::int,
             (x.outcome = 'degraded' and not x.in_maintenance)::int,
             (x.outcome = 'down' and not x.in_maintenance)::int,
             (x.outcome = 'blocked' and not x.in_maintenance)::int,
             x.in_maintenance::int
      from probe_results x
      where ${inScope} and x.started_at >= ${new Date(since)} and x.started_at < ${edge}
        ${atLocation("x.location", location)}
    ) c
    group by probe_key`.execute(db);
  return new Map(rows.map(({ probe_key, ...c }) => [String(probe_key), c]));
}

interface Latency {
  p50: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
}

async function exactLatency(
  db: Reader,
  key: string,
  since: number,
  location?: string,
): Promise<Latency> {
  const { rows: [row] } = await sql<Latency>`
    select percentile_disc(0.5) within group (order by duration_ms) as p50,
           percentile_disc(0.95) within group (order by duration_ms) as p95,
           percentile_disc(0.99) within group (order by duration_ms) as p99,
           max(duration_ms) as max
    from probe_results
    where probe_key = ${key} and started_at >= ${new Date(since)} and ${answeredRun()}
      ${atLocation("location", location)}`.execute(db);
  return row;
}

/**
 * The latencies of some probes' runs since a time, merged into one histogram (with the exact
 * maximum): whole hours from the hourly rollups, the part of the first hour from raw results.
 */
export async function latencyHistogramSince(
  db: Reader,
  inScope: (column: "probe_key") => RawBuilder<boolean>,
  since: number,
): Promise<{ histogram: number[]; max: number | null }> {
  const edge = new Date(ceilHour(since));
  const hours = await db.selectFrom("probe_rollups")
    .select(["latency_buckets", "latency_max"])
    .where(inScope("probe_key")).where("hour", ">=", edge).execute();
  const raw = await db.selectFrom("probe_results").select("duration_ms")
    .where(inScope("probe_key")).where("started_at", ">=", new Date(since))
    .where("started_at", "<", edge).where("http_status", "is not", null).execute();
  const histogram = emptyHistogram();
  let max: number | null = null;
  for (const h of hours) {
    addInto(histogram, h.latency_buckets);
    if (h.latency_max !== null) max = Math.max(max ?? 0, h.latency_max);
  }
  for (const r of raw) {
    histogram[bucketOf(r.duration_ms)]++;
    max = Math.max(max ?? 0, r.duration_ms);
  }
  return { histogram, max };
}

async function estimatedLatency(
  db: Reader,
  key: string,
  since: number,
  location?: string,
): Promise<Latency> {
  const { histogram, max } = await latencyHistogramSince(
    db,
    (column) =>
      location === undefined
        ? sql<boolean>`${sql.ref(column)} = ${key}`
        : sql<boolean>`${sql.ref(column)} = ${key} and location = ${location}`,
    since,
  );
  if (max === null) return { p50: null, p95: null, p99: null, max: null };
  return {
    p50: percentileOf(histogram, 0.5, max),
    p95: percentileOf(histogram, 0.95, max),
    p99: percentileOf(histogram, 0.99, max),
    max,
  };
}

/**
 * A probe's statistics over a window ending now. Percentiles are exact (nearest rank over raw
 * results) when every run of the window still has its raw result, else estimated from the
 * hourly histograms. Read in one repeatable-read transaction so the parts agree.
 */
export function probeStats(
  { db, input, now = Date.now(), names }: {
    db: Db;
    input: ProbeStatsInput;
    now?: number;
    names?: LocationNames;
  },
): Promise<ProbeStats> {
  const since = now - STATS_WINDOW_MS[input.window];
  const location = locationOf(input.location, names);
  return db.transaction().setIsolationLevel("repeatable read").execute(async (trx) => {
    const key = await probeKeyOf(trx, input.project, input.probeId);
    const counts = (await countsSince(trx, { key }, since, location)).get(key) ?? noCounts();
    let rawQuery = trx.selectFrom("probe_results")
      .select((eb) => eb.fn.countAll<number | string>().as("raw"))
      .where("probe_key", "=", key).where("started_at", ">=", new Date(since));
    if (location !== undefined) rawQuery = rawQuery.where("location", "=", location);
    const { raw } = await rawQuery.executeTakeFirstOrThrow();
    const exact = Number(raw) === total(counts) + counts.blocked + counts.maintenance;
    const latency = exact
      ? await exactLatency(trx, key, since, location)
      : await estimatedLatency(trx, key, since, location);
    // The last run: of that location, or the latest of any.
    let lastQuery = trx.selectFrom("probe_schedule").select(["last_outcome", "last_run_at"])
      .where("probe_key", "=", key).where("last_run_at", "is not", null);
    if (location !== undefined) lastQuery = lastQuery.where("location", "=", location);
    const last = await lastQuery.orderBy("last_run_at", "desc").limit(1).executeTakeFirst();
    return {
      window: input.window,
      since: new Date(since).toISOString(),
      runs: total(counts),
      ...counts,
      uptime: uptimeOf(counts),
      p50: latency.p50,
      p95: latency.p95,
      p99: latency.p99,
      max: latency.max,
      percentiles: exact ? "exact" : "estimated",
      last_outcome: last?.last_outcome ?? null,
      last_run_at: isoOrNull(last?.last_run_at ?? null),
    };
  });
}

/** Every probe of a project with its last outcome and its uptime over the last 24 hours. */
export function projectStatus(
  { db, project, now = Date.now() }: { db: Db; project: string; now?: number },
): Promise<{ data: ProbeStatus[]; meta: { count: number; status: "enabled" | "disabled" } }> {
  return db.transaction().setIsolationLevel("repeatable read").execute(async (trx) => {
    const row = await trx.selectFrom("projects").select("status").where("name", "=", project)
      .executeTakeFirst();
    if (!row) throw notFound("Project");
    // The state and last run of the built-in location's schedule row.
    const probes = await trx.selectFrom("probes")
      .leftJoin("probe_verdicts", "probe_verdicts.probe_key", "probes.key")
      .select([
        "probes.key",
        "probes.probe_id",
        "probes.url",
        "probes.method",
        "probes.label",
        "probe_verdicts.state",
        "probe_verdicts.state_since",
        sql<Outcome | null>`(select s.last_outcome from probe_schedule s
          where s.probe_key = probes.key and s.last_run_at is not null
          order by s.last_run_at desc limit 1)`.as("last_outcome"),
        sql<Date | null>`(select max(s.last_run_at) from probe_schedule s
          where s.probe_key = probes.key)`.as("last_run_at"),
      ])
      .where("probes.project", "=", project)
      .orderBy(sql`probes.url collate "C"`)
      .execute();
    const counts = await countsSince(trx, { project }, now - STATS_WINDOW_MS["24h"]);
    const data = probes.map((p) => {
      const c = counts.get(String(p.key)) ?? noCounts();
      return {
        probe_id: p.probe_id,
        url: p.url,
        method: p.method,
        label: p.label,
        state: p.state ?? "unknown",
        state_since: isoOrNull(p.state_since),
        last_outcome: p.last_outcome,
        last_run_at: isoOrNull(p.last_run_at),
        runs_24h: total(c),
        uptime_24h: uptimeOf(c),
      };
    });
    return { data, meta: { count: data.length, status: row.status } };
  });
}
