/**
 * `deno task bench:remote-alert`: the time from a remote runner's failing run to the notification
 * (issue 21: "p99 under 1 s, quorum 1").
 *
 * The service (`deno task start`'s entry, RUNNER=off: the built-in location runs nothing) on
 * PostgreSQL, in a database of the bench's own that is dropped afterwards; a remote location and
 * one remote runner process (`deno task runner:remote`'s entry) with its token; a webhook target
 * on a local receiver (Deno.serve on 127.0.0.1, recording each call's arrival time); the alert
 * policy pointed at it with `failure_threshold` and `success_threshold` 1 and `location_quorum` 1.
 * `--probes` probes (50) of that location, every 10 s (the shortest interval), on a local target
 * that is switched to answering 500 and back, `--flips` times (3). For each `probe.down` (and
 * `probe.recovered`) notification: from the end of the run that moved the state, as recorded
 * (its `started_at` plus its `duration_ms`), to the webhook's arrival. Prints count, p50, p99 and
 * max.
 *
 *   deno task bench:remote-alert [--probes 50] [--flips 3]
 *
 * BENCH_DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres).
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { type Db, openDatabase } from "../server/storage/database.ts";
import { createPostgresDatabase } from "../server/testing/app.ts";
import { restCall, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";

const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const REMOTE_ENTRY = new URL("../server/runner/remote/main.ts", import.meta.url).pathname;
const KEY = "bench-remote-alert-key-0123456789";
const LOCATION = "bench-remote";
const INTERVAL_S = 10;

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    probes: { type: "string", default: "50" },
    flips: { type: "string", default: "3" },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  console.log(`deno task bench:remote-alert [--probes 50] [--flips 3]

Time from a remote runner's failing run to the webhook notification, quorum 1: --probes probes
of a remote location (every ${INTERVAL_S} s) on a target flipped to 500 and back --flips times, one
remote runner, the service on PostgreSQL (BENCH_DATABASE_URL, default ${DEFAULT_ADMIN_URL}).
Each flip takes about two intervals. A short run: --probes 10 --flips 2`);
  Deno.exit(0);
}
const N = Number(args.probes);
const FLIPS = Number(args.flips);
const ADMIN_URL = Deno.env.get("BENCH_DATABASE_URL") ?? DEFAULT_ADMIN_URL;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Arrival {
  type: string;
  incidentId: string | null;
  at: number;
}

/** A webhook receiver on loopback that records each call's type, incident and arrival time. */
function receiver() {
  const arrivals: Arrival[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const at = Date.now();
    const event = await req.json();
    arrivals.push({ type: event.type, incidentId: event.data?.incident_id ?? null, at });
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    arrivals,
    count: (type: string) => arrivals.filter((a) => a.type === type).length,
    close: () => server.shutdown(),
  };
}

async function call(service: ServerProcess, method: string, path: string, body?: unknown) {
  const answer = await restCall(service, KEY, method, path, body);
  if (answer.status >= 300) {
    throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  }
  return answer.body;
}

async function waitFor(what: string, done: () => boolean | Promise<boolean>, ms: number) {
  const until = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];

/**
 * From the end of the run that moved the state (the incident's start or resolution is that run's
 * `started_at`) to the arrival, per arrival of `type`, split at the notification's `created_at`
 * (the start of the transaction that recorded the posted result and queued the notification);
 * arrivals with no such run are counted.
 */
async function delays(db: Db, arrivals: Arrival[], type: string) {
  const column = type === "probe.down" ? "started_at" : "resolved_at";
  const total: number[] = [];
  const toQueued: number[] = [];
  const toArrival: number[] = [];
  let unmatched = 0;
  for (const a of arrivals.filter((x) => x.type === type && x.incidentId)) {
    const { rows: [run] } = await sql<{ ended: Date; queued: Date }>`
      select r.started_at + r.duration_ms * interval '1 millisecond' as ended,
        n.created_at as queued
      from incidents i
      join probe_results r on r.probe_key = i.probe_key and r.started_at = i.${sql.ref(column)}
      join notifications n on n.incident_id = i.id and n.event = ${type}
      where i.id = ${a.incidentId}`.execute(db);
    if (!run) {
      unmatched++;
      continue;
    }
    const ended = new Date(run.ended).getTime();
    const queued = new Date(run.queued).getTime();
    total.push(a.at - ended);
    toQueued.push(queued - ended);
    toArrival.push(a.at - queued);
  }
  const sort = (v: number[]) => v.sort((x, y) => x - y);
  return { total: sort(total), toQueued: sort(toQueued), toArrival: sort(toArrival), unmatched };
}

const figures = (sorted: number[]) =>
  `p50 ${pct(sorted, 0.5)} ms  p99 ${pct(sorted, 0.99)} ms  max ${sorted.at(-1)} ms`;

console.log(
  `bench:remote-alert  probes=${N} flips=${FLIPS} interval=${INTERVAL_S}s ` +
    `cores=${navigator.hardwareConcurrency}`,
);
const database = await createPostgresDatabase(ADMIN_URL, "probe_bench");
const target = await startTarget({ countOnly: true });
const hook = receiver();
const children: ServerProcess[] = [];
const dataDir = await Deno.makeTempDir({ prefix: "bench-remote-alert-" });
const handle = await openDatabase({ kind: "postgres", url: database.url, poolSize: 2 });
try {
  const service = await startServerProcess({
    env: {
      DATABASE_URL: database.url,
      SERVICE_API_KEY: KEY,
      DATA_DIR: dataDir,
      RUNNER: "off",
      // The webhook receiver is on loopback: notifications follow the probes' network policy.
      PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
      PROBE_INTERVAL_SECONDS: String(INTERVAL_S),
      RATE_LIMIT_PER_SECOND: "0",
      LOG_LEVEL: "warn",
    },
    output: "capture",
  });
  children.push(service);
  const { data: location } = await call(service, "POST", "/locations", {
    name: LOCATION,
    label: "bench",
  });
  await call(service, "POST", "/notification-targets", {
    name: "hook",
    kind: "webhook",
    url: hook.url,
  });
  await call(service, "PATCH", "/settings/alerts", {
    targets: ["hook"],
    failure_threshold: 1,
    success_threshold: 1,
    location_quorum: 1,
  });
  await call(service, "POST", "/projects", { project: "ra", default_locations: [LOCATION] });
  for (let i = 0; i < N; i++) {
    await call(service, "POST", "/projects/ra/probes", { url: `${target.origin}/health?i=${i}` });
  }
  const runner = await startServerProcess({
    entry: REMOTE_ENTRY,
    env: {
      SERVICE_URL: service.url,
      LOCATION_TOKEN: location.token as string,
      PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
      LOG_LEVEL: "warn",
    },
    waitReady: false,
    output: "capture",
  });
  children.push(runner);

  const allUp = async () => {
    const { rows: [r] } = await sql<{ n: number }>`
      select count(*)::int as n from probe_verdicts where state = 'up'`.execute(handle.db);
    return r.n === N;
  };
  await waitFor("every probe up", allUp, 60_000);
  for (let f = 1; f <= FLIPS; f++) {
    target.setHealth(500, { status: "DOWN" });
    await waitFor("the down alerts", () => hook.count("probe.down") >= N * f, 60_000);
    target.setHealth(200, { status: "UP" });
    await waitFor("the recovered alerts", () => hook.count("probe.recovered") >= N * f, 60_000);
    console.log(`  … flip ${f} of ${FLIPS}: ${hook.arrivals.length} notifications`);
  }
  for (const type of ["probe.down", "probe.recovered"]) {
    const d = await delays(handle.db, hook.arrivals, type);
    console.log(
      `${type}: count ${d.total.length}` +
        (d.unmatched ? ` (${d.unmatched} with no run found)` : ""),
    );
    console.log(`  run end → webhook arrival:     ${figures(d.total)}`);
    console.log(`    run end → result recorded:   ${figures(d.toQueued)}`);
    console.log(`    recorded → webhook arrival:  ${figures(d.toArrival)}`);
  }
  const once = (type: string) => hook.count(type) - N * FLIPS;
  console.log(
    `notifications beyond one per transition: ${once("probe.down")} down, ` +
      `${once("probe.recovered")} recovered`,
  );
} catch (error) {
  for (const child of children) console.error(child.output().slice(-2000));
  throw error;
} finally {
  for (const child of children) child.kill("SIGKILL");
  await Promise.allSettled(children.map((c) => c.status));
  await handle.close();
  await hook.close();
  await target.close();
  await database.drop();
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
}
