/**
 * `deno task bench:project-delete`: deleting a big project while the runner runs (issue 19), on
 * PostgreSQL, in a database of the bench's own that is dropped afterwards.
 *
 * A project with `--probes` probes (100,000) and `--results` stored raw results (1,000,000, over
 * the last day) and one rollup per probe and hour of it, next to a project of `--others` probes
 * (1,000) whose history must stay. The service (`server/main.ts`, with its runner) runs all the
 * probes against a local target every `--interval` seconds; after `--warmup` seconds the
 * project is deleted through `DELETE /api/v1/projects/{project}`. Prints:
 *
 * - bytes per stored result (the partitions of `probe_results` and their indexes, over the rows
 *   they hold) and per day at 200,000 probes a minute;
 * - the delete's answer and how long it took;
 * - how long until the project's results and rollups were gone (the background purge).
 *
 *   deno task bench:project-delete [--probes 100000] [--results 1000000] [--others 1000]
 *                                  [--interval 60] [--warmup 20]
 *
 * BENCH_DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres).
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { SERVER_ENTRY, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { createPostgresDatabase } from "../server/testing/app.ts";

const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const KEY = "bench-key-0123456789";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    probes: { type: "string", default: "100000" },
    results: { type: "string", default: "1000000" },
    others: { type: "string", default: "1000" },
    interval: { type: "string", default: "60" },
    warmup: { type: "string", default: "20" },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  console.log(`deno task bench:project-delete [--probes 100000] [--results 1000000]
    [--others 1000] [--interval 60] [--warmup 20]
A short run: --probes 5000 --results 50000 --others 100 --warmup 10`);
  Deno.exit(0);
}
const PROBES = Number(args.probes);
const RESULTS = Number(args.results);
const OTHERS = Number(args.others);
const ADMIN_URL = Deno.env.get("BENCH_DATABASE_URL") ?? DEFAULT_ADMIN_URL;
const PER_DAY = 200_000 * 60 * 24;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

console.log(
  `bench:project-delete  probes=${PROBES} results=${RESULTS} others=${OTHERS} ` +
    `interval=${args.interval}s  cores=${navigator.hardwareConcurrency}`,
);
const database = await createPostgresDatabase(ADMIN_URL, "probe_bench");
const target = await startTarget({ countOnly: true });
const handle = await openDatabase({ kind: "postgres", url: database.url, poolSize: 2 });
let service: ServerProcess | undefined;
try {
  const db = handle.db;
  await migrateToLatest(db);
  await sql`insert into projects (name) values ('doomed'), ('others')`.execute(db);
  await sql`
    insert into probes (project, probe_id, url, method, headers)
    select 'doomed', 'd' || i, ${target.origin} || '/d/' || i, 'GET', '{}'
    from generate_series(1, ${PROBES}::int) as i`.execute(db);
  await sql`
    insert into probes (project, probe_id, url, method, headers)
    select 'others', 'o' || i, ${target.origin} || '/o/' || i, 'GET', '{}'
    from generate_series(1, ${OTHERS}::int) as i`.execute(db);
  const { rows: [span] } = await sql<{ first: string; last: string }>`
    select min(key)::text as first, max(key)::text as last from probes
    where project = 'doomed'`.execute(db);
  const doomed = sql`probe_key between ${span.first} and ${span.last}`;

  // Results as the runner writes them, spread over the last day, in chunks of 100,000.
  const t0 = Date.now();
  const now = Date.now();
  for (let done = 0; done < RESULTS; done += 100_000) {
    const n = Math.min(100_000, RESULTS - done);
    await sql`
      insert into probe_results (probe_key, due_at, started_at, duration_ms, outcome,
        http_status, error, address, runner, trigger, in_maintenance)
      select ${span.first}::bigint + (g % ${PROBES}::int), t, t + interval '3 ms', 20 + g % 50,
             'up', 200, null, '127.0.0.1', 'bench-host:12345:1f2e3d4c', 'schedule', false
      from generate_series(${done}::int, ${done + n - 1}::int) g,
           lateral (select ${new Date(now)}::timestamptz
                      - (g::float8 / ${RESULTS}::int * interval '23 hours') as t) x`
      .execute(db);
  }
  // One rollup per probe and hour of its results (at most 24 per probe).
  await sql`
    insert into probe_rollups (probe_key, hour, up, latency_count, latency_max, latency_buckets)
    select probe_key, date_trunc('hour', started_at), count(*), count(*), max(duration_ms),
           array_fill(0, array[32])
    from probe_results where ${doomed} group by 1, 2`.execute(db);
  await sql`analyze probe_results`.execute(db);
  await sql`analyze probe_rollups`.execute(db);
  console.log(`seeded in ${seconds(Date.now() - t0)}`);

  const { rows: [size] } = await sql<{ tables: string; indexes: string; n: string }>`
    select sum(pg_table_size(i.inhrelid))::text as tables,
           sum(pg_indexes_size(i.inhrelid))::text as indexes,
           (select count(*) from probe_results)::text as n
    from pg_inherits i where i.inhparent = 'probe_results'::regclass`.execute(db);
  const perRow = (Number(size.tables) + Number(size.indexes)) / Number(size.n);
  console.log(
    `bytes per stored result: ${perRow.toFixed(1)} (table ${
      (Number(size.tables) / Number(size.n)).toFixed(1)
    } + indexes ${(Number(size.indexes) / Number(size.n)).toFixed(1)}; ${size.n} rows, ${
      mib(Number(size.tables) + Number(size.indexes))
    })`,
  );
  console.log(
    `per day at 200,000 probes/min: ${(perRow * PER_DAY / 1024 ** 3).toFixed(1)} GiB ` +
      `(${PER_DAY.toLocaleString("en")} results)`,
  );

  service = await startServerProcess({
    entry: SERVER_ENTRY,
    env: {
      DATABASE_URL: database.url,
      SERVICE_API_KEY: KEY,
      PROBE_INTERVAL_SECONDS: args.interval!,
      PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
      LOG_LEVEL: "info",
    },
    output: "capture",
    readyTimeoutMs: 120_000,
  });
  const before = target.counts.size;
  await sleep(Number(args.warmup) * 1000);
  const requests = [...target.counts.values()].reduce((a, b) => a + b, 0);
  console.log(`runner: ${requests} target requests in the warm-up (${before} before)`);

  const { rows: [rollups] } = await sql<{ n: string }>`
    select count(*)::text as n from probe_rollups where ${doomed}`.execute(db);
  const t1 = performance.now();
  const res = await fetch(`${service.url}/api/v1/projects/doomed`, {
    method: "DELETE",
    headers: { "x-service-api-key": KEY },
  });
  const body = await res.text();
  const answered = performance.now() - t1;
  console.log(`delete answered ${res.status} in ${seconds(answered)}`);
  if (res.status !== 200) console.log(body.slice(0, 500));

  let last = -1;
  for (;;) {
    const { rows: [left] } = await sql<{ results: string; rollups: string; tombstones: string }>`
      select (select count(*) from probe_results where ${doomed})::text as results,
             (select count(*) from probe_rollups where ${doomed})::text as rollups,
             (select count(*) from probe_tombstones)::text as tombstones`.execute(db);
    if (left.results === "0" && left.rollups === "0" && left.tombstones === "0") break;
    const elapsed = performance.now() - t1;
    if (Math.floor(elapsed / 10_000) !== last) {
      last = Math.floor(elapsed / 10_000);
      console.log(
        `  … ${seconds(elapsed)}: ${left.results} results, ${left.rollups} rollups, ` +
          `${left.tombstones} deleted probes left`,
      );
    }
    if (elapsed > 30 * 60_000) throw new Error("not gone after 30 minutes");
    await sleep(250);
  }
  console.log(
    `rows gone (${RESULTS} results, ${rollups.n} rollups) ${
      seconds(performance.now() - t1)
    } after the delete was sent`,
  );
  const { rows: [kept] } = await sql<{ n: string }>`
    select count(*)::text as n from probe_results r join probes p on p.key = r.probe_key
    where p.project = 'others'`.execute(db);
  console.log(`the other project's results meanwhile: ${kept.n}`);
  const errors = service.lines.filter((l) => /"level":"(error|warn)"/.test(l.text));
  console.log(`service warnings and errors: ${errors.length}`);
  for (const l of errors.slice(0, 5)) console.log(`  ${l.text.slice(0, 300)}`);
} finally {
  await service?.stop(10_000);
  await handle.close();
  await target.close();
  await database.drop();
}
