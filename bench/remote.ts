/**
 * `deno task bench:remote`: N probes of a remote location against a local target, run by one
 * remote runner (`deno task runner:remote`) over HTTP against the service (`deno task start`,
 * RUNNER=off) on PostgreSQL, in a database of the bench's own that is dropped afterwards. Prints
 * checks per second, schedule slip (start minus due time) p50/p99/max of the runs made and the
 * due runs not made (the location's lag), the service's API latency
 * p50/p99 (a keyed read every 100 ms meanwhile), the requests per second the runner protocol
 * cost the service, and double records.
 *
 *   deno task bench:remote [--probes 100000] [--interval 60] [--duration 120] [--concurrency 400]
 *
 * BENCH_DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres).
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import postgres from "postgres";
import { sql } from "kysely";
import { openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { syncSchedules } from "../server/runner/store.ts";
import { restCall, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { speedNote } from "./setup.ts";

const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const REMOTE_ENTRY = new URL("../server/runner/remote/main.ts", import.meta.url).pathname;
const KEY = "bench-remote-key-0123456789";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    probes: { type: "string", default: "100000" },
    interval: { type: "string", default: "60" },
    duration: { type: "string", default: "120" },
    concurrency: { type: "string", default: "400" },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  console.log(`deno task bench:remote [--probes 100000] [--interval 60] [--duration 120]
                       [--concurrency 400]

N probes (--probes) of a remote location against a local target, every --interval seconds, run
for --duration seconds by one remote runner (PROBE_CONCURRENCY=--concurrency) over HTTP against
the service on PostgreSQL (BENCH_DATABASE_URL, default ${DEFAULT_ADMIN_URL}).
A short run: --probes 2000 --interval 10 --duration 20`);
  Deno.exit(0);
}
console.log(await speedNote());
const N = Number(args.probes);
const INTERVAL_S = Number(args.interval);
const DURATION_S = Number(args.duration);
const STARTUP_MS = 10_000;
const ADMIN_URL = Deno.env.get("BENCH_DATABASE_URL") ?? DEFAULT_ADMIN_URL;
const name = `probe_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;

async function admin(statement: string) {
  const s = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await s.unsafe(statement);
  } finally {
    await s.end();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
const fmt = (ms: number) => `${Math.round(ms)} ms`;

console.log(
  `bench:remote  probes=${N} interval=${INTERVAL_S}s duration=${DURATION_S}s ` +
    `concurrency=${args.concurrency}  cores=${navigator.hardwareConcurrency}`,
);
await admin(`create database ${name}`);
const target = await startTarget({ countOnly: true });
const handle = await openDatabase({ kind: "postgres", url: url.href, poolSize: 2 });
const children: ServerProcess[] = [];
const dataDir = await Deno.makeTempDir({ prefix: "bench-remote-" });
try {
  const db = handle.db;
  await migrateToLatest(db);
  await db.insertInto("locations").values({ name: "bench-remote", token_sha256: "-" }).execute();
  await db.insertInto("projects").values({ name: "bench", default_locations: ["bench-remote"] })
    .execute();
  await sql`
    insert into probes (project, probe_id, url, method, headers)
    select 'bench', 'b' || i, ${target.origin} || '/p/' || i, 'GET', '{}'
    from generate_series(1, ${N}::int) as i`.execute(db);
  // Steady state from the start: every probe on its grid, the first runs once all has started.
  const t0 = Date.now() + STARTUP_MS;
  await syncSchedules(db, { now: t0, intervalMs: INTERVAL_S * 1000, first: "grid" });

  const service = await startServerProcess({
    env: {
      DATABASE_URL: url.href,
      SERVICE_API_KEY: KEY,
      DATA_DIR: dataDir,
      RUNNER: "off",
      PROBE_INTERVAL_SECONDS: String(INTERVAL_S),
      RATE_LIMIT_PER_SECOND: "0",
      LOG_LEVEL: "warn",
    },
    output: "capture",
  });
  children.push(service);
  const token = (await restCall(service, KEY, "POST", "/locations/bench-remote/token")).body.data
    .token as string;
  const runner = await startServerProcess({
    entry: REMOTE_ENTRY,
    env: {
      SERVICE_URL: service.url,
      LOCATION_TOKEN: token,
      PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
      PROBE_CONCURRENCY: args.concurrency!,
      LOG_LEVEL: "warn",
    },
    waitReady: false,
    output: "capture",
  });
  children.push(runner);
  while (Date.now() < t0) await sleep(50);

  // The service's own API latency meanwhile: a keyed read every 100 ms.
  const latencies: number[] = [];
  const tEnd = t0 + DURATION_S * 1000;
  const probeApi = (async () => {
    while (Date.now() < tEnd) {
      const began = performance.now();
      await restCall(service, KEY, "GET", "/projects/bench");
      latencies.push(performance.now() - began);
      await sleep(100);
    }
  })();
  let lastReport = Date.now();
  while (Date.now() < tEnd) {
    await sleep(Math.min(1000, tEnd - Date.now()));
    if (Date.now() - lastReport >= 30_000) {
      lastReport = Date.now();
      const { n } = await db.selectFrom("probe_results").select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow();
      console.log(`  … ${Math.round((Date.now() - t0) / 1000)} s: ${n} checks`);
    }
  }
  await probeApi;
  const lag = (await restCall(service, KEY, "GET", "/locations/bench-remote")).body.data
    .lag_seconds as number;
  const metrics = await (await fetch(`${service.url}/metrics`, {
    headers: { "x-service-api-key": KEY },
  })).text();
  runner.kill("SIGTERM");
  await runner.status;

  const since = new Date(t0);
  const until = new Date(tEnd);
  const { rows: [m] } = await sql<{ checks: number; p50: number; p99: number; max: number }>`
    select count(*)::int as checks,
           percentile_disc(0.5) within group (order by slip) as p50,
           percentile_disc(0.99) within group (order by slip) as p99,
           max(slip) as max
    from (select extract(epoch from (started_at - due_at)) * 1000 as slip
          from probe_results where due_at >= ${since} and due_at < ${until}) s`.execute(db);
  const { rows: [dup] } = await sql<{ n: number }>`
    select count(*)::int as n from (
      select probe_key, due_at from probe_results group by 1, 2 having count(*) > 1) d`
    .execute(db);
  const protocol = [...metrics.matchAll(
    /^http_requests_total\{[^}]*route="\/api\/v1\/runner\/(?:claim|results)"[^}]*\} (\d+)/gm,
  )].reduce((n, r) => n + Number(r[1]), 0);
  const sorted = latencies.sort((a, b) => a - b);
  const wanted = N / INTERVAL_S;
  console.log(`checks:                   ${m.checks} in ${DURATION_S} s`);
  console.log(
    `checks per second:        ${(m.checks / DURATION_S).toFixed(1)} (due: ${wanted.toFixed(1)})`,
  );
  console.log(`schedule slip:            p50 ${fmt(m.p50)}  p99 ${fmt(m.p99)}  max ${fmt(m.max)}`);
  // Slip is of the runs made; runs not made by the end (behind schedule) show here instead.
  const due = Math.round(wanted * DURATION_S);
  console.log(
    `due runs not made:        ${Math.max(0, due - m.checks)} of ${due}; ` +
      `location lag at the end: ${lag.toFixed(1)} s`,
  );
  console.log(
    `API latency (keyed GET):  p50 ${fmt(pct(sorted, 0.5))}  p99 ${fmt(pct(sorted, 0.99))}` +
      `  (${sorted.length} reads)`,
  );
  console.log(
    `protocol requests/s:      ${(protocol / (DURATION_S + STARTUP_MS / 1000)).toFixed(2)}` +
      ` (claims and posts over the run, from the service's /metrics)`,
  );
  console.log(`runs recorded twice:      ${dup.n}`);
} finally {
  for (const child of children) child.kill("SIGKILL");
  await Promise.allSettled(children.map((c) => c.status));
  await target.close();
  await handle.close();
  await admin(`drop database if exists ${name} with (force)`);
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
}
