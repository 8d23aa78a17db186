/**
 * A probe's time series for charts: every bucket of a window, oldest first, empty ones included,
 * with runs per outcome (maintenance apart), uptime and latency (p50, p95, max). All in UTC:
 *
 * | Window | Buckets              | From                                                   |
 * | ------ | -------------------- | ------------------------------------------------------ |
 * | `1h`   | 60 of a minute       | raw results: exact percentiles                         |
 * | `6h`   | 72 of 5 minutes      | raw results: exact percentiles                         |
 * | `24h`  | 288 of 5 minutes     | raw results: exact percentiles                         |
 * | `7d`   | 168 of an hour       | hourly rollups: percentiles estimated, `max` exact     |
 * | `30d`  | 30 of a day (UTC)    | hourly rollups merged by day: the same                 |
 * | `90d`  | 90 of a day (UTC)    | hourly rollups merged by day: the same                 |
 *
 * Buckets are aligned on their size (the minute, 5 minutes, the hour, midnight UTC); the last one
 * holds now and is still filling. One statement reads the whole window, of every location the
 * probe runs from or of one (`?location=`); one more (two index look-ups) when the probe's history
 * starts.
 *
 * @module
 */
import type { Outcome, Series, SeriesBucket, SeriesInput } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { addInto, emptyHistogram, percentileOf } from "./histogram.ts";
import { notFound } from "./errors.ts";
import type { LocationNames } from "./locations.ts";
import { locationOf } from "./results.ts";
import { answeredRun } from "./answered.ts";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** Each window's bucket size and count. */
export const SERIES_LAYOUT: Record<SeriesInput["window"], { bucketMs: number; count: number }> = {
  "1h": { bucketMs: MINUTE_MS, count: 60 },
  "6h": { bucketMs: 5 * MINUTE_MS, count: 72 },
  "24h": { bucketMs: 5 * MINUTE_MS, count: 288 },
  "7d": { bucketMs: HOUR_MS, count: 168 },
  "30d": { bucketMs: DAY_MS, count: 30 },
  "90d": { bucketMs: DAY_MS, count: 90 },
};

type Counts = Record<Outcome | "maintenance", number>;
type Latency = Pick<SeriesBucket, "p50" | "p95" | "max">;

const noCounts = (): Counts => ({ up: 0, degraded: 0, down: 0, blocked: 0, maintenance: 0 });

/**
 * A bucket as answered: its counts, runs and uptime from them (blocked runs apart, as maintenance
 * ones), and its latency.
 */
function bucketAt(start: number, c: Counts, latency: Latency): SeriesBucket {
  const runs = c.up + c.degraded + c.down;
  return {
    start: new Date(start).toISOString(),
    runs,
    ...c,
    uptime: runs === 0 ? null : (c.up + c.degraded) / runs,
    ...latency,
  };
}

const noLatency: Latency = { p50: null, p95: null, max: null };

/** Windows read from raw results (exact percentiles); the others from the hourly rollups. */
const FROM_RESULTS: ReadonlySet<SeriesInput["window"]> = new Set(["1h", "6h", "24h"]);

/**
 * When the probe's oldest run still held started: the oldest raw result, or the hour of the
 * oldest rollup when raw results that old are pruned.
 */
async function historySince(db: Db, key: string): Promise<string | null> {
  const { rows: [row] } = await sql<{ raw: Date | string | null; hour: Date | string | null }>`
    select (select min(started_at) from probe_results where probe_key = ${key}) as raw,
      (select min(hour) from probe_rollups where probe_key = ${key}) as hour`.execute(db);
  const raw = row?.raw == null ? null : new Date(row.raw).getTime();
  const hour = row?.hour == null ? null : new Date(row.hour).getTime();
  if (raw === null && hour === null) return null;
  const oldest = raw === null || (hour !== null && hour < Math.floor(raw / HOUR_MS) * HOUR_MS)
    ? hour!
    : raw;
  return new Date(oldest).toISOString();
}

/** Minute or 5-minute buckets from raw results: counts and exact (nearest-rank) percentiles in SQL. */
async function fromResults(
  db: Db,
  key: string,
  first: number,
  bucketMs: number,
  count: number,
  location?: string,
) {
  const { rows } = await sql<Counts & Latency & { i: number }>`
    select floor(extract(epoch from (started_at - ${new Date(first)}::timestamptz)) * 1000
                 / ${sql.lit(bucketMs)})::int as i,
      count(*) filter (where outcome = 'up' and not in_maintenance)::int as up,
      count(*) filter (where outcome = 'degraded' and not in_maintenance)::int as degraded,
      count(*) filter (where outcome = 'down' and not in_maintenance)::int as down,
      count(*) filter (where outcome = 'blocked' and not in_maintenance)::int as blocked,
      count(*) filter (where in_maintenance)::int as maintenance,
      percentile_disc(0.5) within group (order by duration_ms)
        filter (where ${answeredRun()}) as p50,
      percentile_disc(0.95) within group (order by duration_ms)
        filter (where ${answeredRun()}) as p95,
      max(duration_ms) filter (where ${answeredRun()}) as max
    from probe_results
    where probe_key = ${key} and started_at >= ${new Date(first)}
      and started_at < ${new Date(first + count * bucketMs)}
      ${location === undefined ? sql`` : sql`and location = ${location}`}
    group by 1`.execute(db);
  const found = new Map(rows.map((r) => [r.i, r]));
  return Array.from({ length: count }, (_, i) => {
    const start = first + i * bucketMs;
    const r = found.get(i);
    if (!r) return bucketAt(start, noCounts(), noLatency);
    const { i: _i, p50, p95, max, ...counts } = r;
    return bucketAt(start, counts, { p50, p95, max });
  });
}

/**
 * Hourly or daily buckets from the rollups: counts added up, histograms merged, percentiles
 * estimated from them and bounded by the exact `max` (`latency_max`).
 */
async function fromRollups(
  db: Db,
  key: string,
  first: number,
  bucketMs: number,
  count: number,
  location?: string,
) {
  let query = db.selectFrom("probe_rollups")
    .select([
      "hour",
      "up",
      "degraded",
      "down",
      "blocked",
      "maintenance",
      "latency_max",
      "latency_buckets",
    ])
    .where("probe_key", "=", key)
    .where("hour", ">=", new Date(first))
    .where("hour", "<", new Date(first + count * bucketMs));
  if (location !== undefined) query = query.where("location", "=", location);
  const rows = await query.execute();
  const buckets = Array.from({ length: count }, () => ({
    counts: noCounts(),
    histogram: emptyHistogram(),
    max: null as number | null,
  }));
  for (const r of rows) {
    const b = buckets[Math.floor((new Date(r.hour).getTime() - first) / bucketMs)];
    if (!b) continue;
    b.counts.up += r.up;
    b.counts.degraded += r.degraded;
    b.counts.down += r.down;
    b.counts.blocked += r.blocked;
    b.counts.maintenance += r.maintenance;
    addInto(b.histogram, r.latency_buckets);
    if (r.latency_max !== null) b.max = Math.max(b.max ?? 0, r.latency_max);
  }
  return buckets.map(({ counts, histogram, max }, i) =>
    bucketAt(
      first + i * bucketMs,
      counts,
      max === null ? noLatency : {
        p50: percentileOf(histogram, 0.5, max),
        p95: percentileOf(histogram, 0.95, max),
        max,
      },
    )
  );
}

/** A probe's series over a window ending now; 404 when the probe does not exist. */
export async function probeSeries(
  { db, input, now = Date.now(), names }: {
    db: Db;
    input: SeriesInput;
    now?: number;
    names?: LocationNames;
  },
): Promise<Series> {
  const location = locationOf(input.location, names);
  const probe = await db.selectFrom("probes").select("key")
    .where("project", "=", input.project).where("probe_id", "=", input.probeId)
    .executeTakeFirst();
  if (!probe) throw notFound("Probe");
  const key = String(probe.key);
  const { bucketMs, count } = SERIES_LAYOUT[input.window];
  const first = Math.floor(now / bucketMs) * bucketMs - (count - 1) * bucketMs;
  const raw = FROM_RESULTS.has(input.window);
  const buckets = raw
    ? await fromResults(db, key, first, bucketMs, count, location)
    : await fromRollups(db, key, first, bucketMs, count, location);
  return {
    window: input.window,
    bucket_seconds: bucketMs / 1000,
    since: new Date(first).toISOString(),
    until: new Date(now).toISOString(),
    buckets,
    percentiles: raw ? "exact" : "estimated",
    history_since: await historySince(db, key),
  };
}
