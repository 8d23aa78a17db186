/**
 * `deno task bench:overview`: the dashboard's two reads on PostgreSQL, through the real HTTP
 * server (a `deno task start` process, runner off) over loopback:
 *
 * - `GET /api/v1/overview`: every project with every probe, 1,000 probes by default;
 * - `GET /api/v1/projects/{project}/probes/{probeId}/series?window=…`: one probe's chart, for each
 *   window (24h, 7d, 30d, 90d).
 *
 * The data is generated in SQL (through the API it would take hours): `OVERVIEW_PROBES` probes in
 * projects of 50, raw results for the last 24 hours every 5 minutes (288 per probe), and hourly
 * rollups (12 runs an hour, a latency histogram) for the last 90 days (2,160 per probe); some
 * probes down (with an open incident), some degraded, some never run.
 *
 * Prints each call's median and p90 over `OVERVIEW_ROUNDS` (20) timed calls after 3 untimed
 * ones, and the answer's size.
 *
 * Environment: OVERVIEW_PROBES (1000), OVERVIEW_ROUNDS (20), BENCH_DATABASE_URL (admin URL;
 * default the local 127.0.0.1:5432).
 * Not a test: figures vary with the machine and its load.
 */
import { sql } from "kysely";
import { type Db, openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { BUCKETS } from "../server/domain/histogram.ts";
import { createPostgresDatabase } from "../server/testing/app.ts";
import type { ServerProcess } from "../server/testing/process.ts";
import { BENCH_KEY, benchSettings, envNumber, loadNote, startService } from "./setup.ts";

const PROBES = envNumber("OVERVIEW_PROBES", 1000);
const ROUNDS = envNumber("OVERVIEW_ROUNDS", 20);
const PER_PROJECT = 50;
const HOUR_MS = 3_600_000;

/** A few latency histograms to give the rollups (12 runs each), picked by probe and hour. */
function histograms(): number[][] {
  const shapes: [number, number][][] = [
    [[17, 6], [18, 4], [20, 2]], // 80-150 ms
    [[20, 5], [21, 5], [23, 2]], // 150-400 ms
    [[14, 10], [16, 1], [27, 1]], // 40-1000 ms
    [[22, 8], [25, 3], [30, 1]], // 250-2000 ms
  ];
  return shapes.map((shape) => {
    const h = new Array(BUCKETS).fill(0);
    for (const [bucket, n] of shape) h[bucket] = n;
    return h;
  });
}

/**
 * Fills a migrated database: projects, probes, their schedule rows (states), 90 days of hourly
 * rollups, 24 hours of raw results and open incidents for the probes that are down.
 */
export async function fill(db: Db, now: number, probes = PROBES): Promise<void> {
  const projects = Math.ceil(probes / PER_PROJECT);
  const maxOf = [150, 400, 1000, 2000];
  const shapes = sql.join(
    histograms().map((h, i) =>
      sql`(${sql.lit(i)}, ${sql.raw(`array[${h.join(",")}]`)}, ${sql.lit(maxOf[i])})`
    ),
  );
  const thisHour = Math.floor(now / HOUR_MS) * HOUR_MS;
  const firstHour = new Date(thisHour - (90 * 24 - 1) * HOUR_MS);
  await sql`insert into projects (name, label)
    select 'shop-' || lpad(i::text, 3, '0'), 'Shop ' || i from generate_series(1, ${projects}) i`
    .execute(db);
  await sql`insert into probes (project, probe_id, url, method, headers, label)
    select 'shop-' || lpad(((i - 1) / ${PER_PROJECT} + 1)::text, 3, '0'), md5(i::text),
      'https://target-' || i || '.example.com/health', 'GET', '{}'::json,
      case when i % 3 = 0 then 'Probe ' || i end
    from generate_series(1, ${probes}) i`.execute(db);
  // Down: key % 50 = 0; degraded: key % 50 = 1; never run (no schedule row): key % 100 = 2.
  await sql`insert into probe_schedule
      (probe_key, next_due_at, last_run_at, last_outcome, state, state_since)
    select key, ${new Date(now + HOUR_MS)}, ${new Date(now - 60_000)},
      case when key % 50 = 0 then 'down' when key % 50 = 1 then 'degraded' else 'up' end,
      case when key % 50 = 0 then 'down' when key % 50 = 1 then 'degraded' else 'up' end,
      ${new Date(now - 2 * HOUR_MS)}
    from probes where key % 100 <> 2`.execute(db);
  await sql`insert into incidents (project, probe_key, probe_id, label, started_at, cause, runs_failed,
      last_error)
    select project, key, probe_id, coalesce(label, url), ${new Date(now - 2 * HOUR_MS)},
      'HTTP 503', 24, 'HTTP 503'
    from probes where key % 50 = 0`.execute(db);
  // One statement per 10 days, so that no statement outlives a statement timeout.
  for (let day = 0; day < 90; day += 10) {
    const from = new Date(firstHour.getTime() + day * 24 * HOUR_MS);
    const to = new Date(Math.min(thisHour, from.getTime() + (10 * 24 - 1) * HOUR_MS));
    await sql`with shapes (shape, buckets, top) as (values ${shapes})
      insert into probe_rollups
        (probe_key, hour, up, degraded, down, blocked, maintenance, latency_count, latency_max,
         latency_buckets)
      select p.key, h.hour,
        case when f.bad then 0 else 12 - f.slow end, case when f.bad then 0 else f.slow end,
        case when f.bad then 12 else 0 end, 0, 0, 12, s.top, s.buckets
      from probes p
      cross join generate_series(${from}::timestamptz, ${to}::timestamptz, interval '1 hour') h(hour)
      cross join lateral (
        select ((p.key * 7 + extract(epoch from h.hour)::bigint / 3600) % 97 = 0
                 or (p.key % 50 = 0 and h.hour > ${new Date(now - 3 * HOUR_MS)})) as bad,
               ((p.key + extract(epoch from h.hour)::bigint / 3600) % 4)::int as shape,
               (case when p.key % 50 = 1 then 3 else 0 end) as slow
      ) f
      join shapes s on s.shape = f.shape`.execute(db);
  }
  await sql`insert into probe_results
      (probe_key, due_at, started_at, duration_ms, outcome, http_status, error, address, runner)
    select p.key, t.at, t.at, 40 + (p.key * 13 + n * 7) % 300,
      case when p.key % 50 = 0 and t.at > ${new Date(now - 3 * HOUR_MS)} then 'down' else 'up' end,
      case when p.key % 50 = 0 and t.at > ${new Date(now - 3 * HOUR_MS)} then 503 else 200 end,
      case when p.key % 50 = 0 and t.at > ${new Date(now - 3 * HOUR_MS)} then 'HTTP 503' end,
      '192.0.2.1', 'bench'
    from probes p
    cross join generate_series(0, 287) n
    cross join lateral (
      select ${new Date(now)}::timestamptz - (n * 300 + p.key % 290 + 1) * interval '1 second' as at
    ) t`.execute(db);
  await sql`analyze`.execute(db);
}

const headers = { "x-service-api-key": BENCH_KEY };

/** `rounds` timed GETs of `path` after 3 untimed ones: median, p90 and the answer's size. */
async function time(service: ServerProcess, path: string, rounds = ROUNDS) {
  const once = async () => {
    const started = performance.now();
    const res = await fetch(`${service.url}${path}`, { headers });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${text}`);
    return { ms, bytes: text.length, body: JSON.parse(text) };
  };
  for (let i = 0; i < 3; i++) await once();
  const runs = [];
  for (let i = 0; i < rounds; i++) runs.push(await once());
  const sorted = runs.map((r) => r.ms).sort((a, b) => a - b);
  return {
    median: sorted[Math.floor((sorted.length - 1) / 2)],
    p90: sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)],
    bytes: runs[0].bytes,
    body: runs[0].body,
  };
}

const ms = (n: number) => `${n.toFixed(1)} ms`;

async function main() {
  const { adminUrl } = benchSettings();
  const database = await createPostgresDatabase(adminUrl, "probe_bench");
  const dataDir = await Deno.makeTempDir({ prefix: "probe-overview-" });
  let service: ServerProcess | undefined;
  try {
    const handle = await openDatabase({ kind: "postgres", url: database.url });
    try {
      await migrateToLatest(handle.db);
      const started = performance.now();
      await fill(handle.db, Date.now());
      console.log(
        `filled ${PROBES} probes in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    } finally {
      await handle.close();
    }
    service = await startService({ databaseUrl: database.url, poolSize: 10, dataDir });
    console.log(loadNote());
    const overview = await time(service, "/api/v1/overview");
    const { projects, probes } = overview.body.meta;
    console.log(
      `GET /api/v1/overview (${projects} projects, ${probes} probes, ` +
        `${overview.body.data.incidents.length} open incidents): median ${ms(overview.median)}, ` +
        `p90 ${ms(overview.p90)}, ${(overview.bytes / 1024).toFixed(0)} KiB`,
    );
    const { project, probes: [probe] } = overview.body.data.projects[0];
    const one = await time(service, `/api/v1/overview?project=${project}`);
    console.log(
      `GET /api/v1/overview?project= (${one.body.meta.probes} probes): ` +
        `median ${ms(one.median)}, p90 ${ms(one.p90)}, ${(one.bytes / 1024).toFixed(0)} KiB`,
    );
    for (const window of ["24h", "7d", "30d", "90d"]) {
      const path = `/api/v1/projects/${project}/probes/${probe.probe_id}/series?window=${window}`;
      const series = await time(service, path);
      console.log(
        `GET …/series?window=${window.padEnd(3)} (${series.body.data.buckets.length} buckets): ` +
          `median ${ms(series.median)}, p90 ${ms(series.p90)}, ` +
          `${(series.bytes / 1024).toFixed(1)} KiB`,
      );
    }
  } finally {
    await service?.stop();
    await database.drop();
    await Deno.remove(dataDir, { recursive: true });
  }
}

if (import.meta.main) await main();
