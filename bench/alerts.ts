/**
 * `deno task bench:alerts`: how fast and how exactly alerts go out, on PostgreSQL, with real
 * server and runner processes, a local target and a local webhook receiver.
 *
 * 1. Time to alert: a server (its runner inside, `PROBE_INTERVAL_SECONDS=10`) with `--latency`
 *    probes (20) on a target that flips to HTTP 500 and back, `failure_threshold` and
 *    `success_threshold` 1: from the end of the run that changed the state (its `started_at` plus
 *    its duration, as recorded) to the webhook's arrival, p50 and p99, for `probe.down` and for
 *    `probe.recovered`, over `--flips` (3) flips.
 * 2. At scale: `--probes` (10,000) probes on two runner processes (the server's runner off, its
 *    deliverer on), 10% of them on a target that flaps every 20 s, every probe every 10 s, for
 *    `--duration` seconds (120); then the runners stop and the outbox drains. Every transition in
 *    the database must have reached the receiver exactly once (by `webhook-id`).
 *
 * 3. Isolation (issue 18): four targets, on a receiver that hangs, one that answers 500, one
 *    that redirects and one that works; `--isolation` (30) probes on a target that flips to 500
 *    and back, `--flips` times, `failure_threshold` and `success_threshold` 1. Prints the working
 *    receiver's time to alert (as in 1.), p50, p99 and max, and what is left pending for the
 *    others (nothing is dropped: they keep their notifications).
 *
 * 4. Hanging receivers: `--hanging` (6) targets on receivers that accept the connection and never
 *    answer, and one working target; `--isolation` (30) probes on a target that flips to 500 and
 *    back, `--flips` times, thresholds of 1, while two clients read another project's probes
 *    without pause for 40 s from the first flip. Prints the working receiver's delay (from the
 *    event's `timestamp`, written when the transition was recorded, to the call's arrival: the
 *    same clock), p50, p99 and max; the other project's reads, p50, p90 and p99, and the server's
 *    CPU time in those 40 s. `--database embedded` runs the service on its embedded database (a
 *    fresh DATA_DIR) instead of PostgreSQL.
 *
 * 5. Many down at once: `--down` (1,000) probes on one target that turns to HTTP 500, each probe
 *    every 10 s, thresholds of 1, the policy naming `--targets` (3) webhook targets on loopback
 *    receivers that count what they get by `webhook-id`, while a client reads another project's
 *    probes back to back. Prints how many each receiver got (and repeats), the time from each
 *    failing run's end to each arrival (p50, p99, max), where that time went per stage (the run's
 *    end, the recording transaction's start, the send's start, the arrival), the API reads'
 *    p50, p99 and max meanwhile, and the service's CPU time (user+sys) per notification: all of
 *    it from the flip to the last arrival, and the sends' alone (the same notifications written
 *    again at once, with every probe down and nothing read, less the steady rate before).
 *
 *   deno task bench:alerts [--latency 20] [--flips 3] [--probes 10000] [--duration 120]
 *                          [--isolation 30] [--part latency|scale|both|isolation|hanging|down]
 *                          [--hanging 6] [--database postgres|embedded] [--down 1000] [--targets 3]
 *
 * BENCH_DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres).
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { type Db, openDatabase } from "../server/storage/database.ts";
import { createPostgresDatabase } from "../server/testing/app.ts";
import { RUNNER_ENTRY, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { silentReceiver } from "../server/testing/silent_receiver.ts";
import { startTarget, type Target } from "../server/testing/target_server.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    latency: { type: "string", default: "20" },
    flips: { type: "string", default: "3" },
    probes: { type: "string", default: "10000" },
    duration: { type: "string", default: "120" },
    isolation: { type: "string", default: "30" },
    part: { type: "string", default: "both" },
    hanging: { type: "string", default: "6" },
    database: { type: "string", default: "postgres" },
    down: { type: "string", default: "1000" },
    targets: { type: "string", default: "3" },
  },
});
const ADMIN_URL = Deno.env.get("BENCH_DATABASE_URL") ??
  "postgres://postgres@127.0.0.1:5432/postgres";
const KEY = "bench-key-0123456789";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Arrival {
  id: string;
  type: string;
  /** The event's own `timestamp`: when the service recorded the transition. */
  timestamp: string;
  incidentId: string | null;
  at: number;
}

/** A webhook receiver that records each call's id, type, incident and arrival time. */
function receiver() {
  const arrivals: Arrival[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const at = Date.now();
    const event = await req.json();
    arrivals.push({
      id: req.headers.get("webhook-id") ?? "",
      type: event.type,
      timestamp: event.timestamp,
      incidentId: event.data?.incident_id ?? null,
      at,
    });
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    arrivals,
    count: (type: string) => arrivals.filter((a) => a.type === type).length,
    close: () => server.shutdown(),
  };
}

function server(databaseUrl: string, env: Record<string, string> = {}) {
  return startServerProcess({
    env: {
      DATABASE_URL: databaseUrl,
      SERVICE_API_KEY: KEY,
      PROBE_INTERVAL_SECONDS: "10",
      PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
      RATE_LIMIT_PER_SECOND: "0",
      LOG_LEVEL: "warn",
      ...env,
    },
  });
}

async function call(base: ServerProcess, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base.url}/api/v1${path}`, {
    method,
    headers: { "x-service-api-key": KEY, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

/** The webhook target and the policy: every event to it, thresholds of 1. */
async function alertTo(base: ServerProcess, url: string) {
  await call(base, "POST", "/notification-targets", { name: "hook", kind: "webhook", url });
  await call(base, "PATCH", "/settings/alerts", {
    targets: ["hook"],
    failure_threshold: 1,
    success_threshold: 1,
  });
}

async function waitFor(what: string, done: () => boolean | Promise<boolean>, ms: number) {
  const until = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Flips the target to 500 and back `flips` times, each way until `n` more alerts arrived. */
async function flip(
  target: Target,
  hook: { count: (type: string) => number },
  n: number,
  flips: number,
  ms: number,
) {
  for (let f = 0; f < flips; f++) {
    target.setHealth(500, { status: "DOWN" });
    await waitFor("the down alerts", () => hook.count("probe.down") >= n * (f + 1), ms);
    target.setHealth(200, { status: "UP" });
    await waitFor("the recovered alerts", () => hook.count("probe.recovered") >= n * (f + 1), ms);
  }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
};

/** From the end of the run that moved the state to the arrival, per arrival of `type`. */
async function delays(db: Db, arrivals: Arrival[], type: string): Promise<number[]> {
  const column = type === "probe.down" ? "started_at" : "resolved_at";
  const out: number[] = [];
  for (const a of arrivals.filter((x) => x.type === type && x.incidentId)) {
    const { rows: [run] } = await sql<{ ended: Date }>`
      select r.started_at + r.duration_ms * interval '1 millisecond' as ended
      from incidents i join probe_results r
        on r.probe_key = i.probe_key and r.started_at = i.${sql.ref(column)}
      where i.id = ${a.incidentId}`.execute(db);
    if (run) out.push(a.at - new Date(run.ended).getTime());
  }
  return out;
}

async function latencyPart() {
  const n = Number(args.latency);
  const flips = Number(args.flips);
  const database = await createPostgresDatabase(ADMIN_URL, "probe_bench");
  const target = await startTarget({ countOnly: true });
  const hook = receiver();
  const base = await server(database.url);
  const handle = await openDatabase({ kind: "postgres", url: database.url });
  try {
    await alertTo(base, hook.url);
    await call(base, "POST", "/projects", { project: "lat" });
    for (let i = 0; i < n; i++) {
      await call(base, "POST", "/projects/lat/probes", { url: `${target.origin}/health?i=${i}` });
    }
    const upCount = async () => {
      const { rows: [r] } = await sql<{ n: number }>`
        select count(*)::int as n from probe_schedule where state = 'up'`.execute(handle.db);
      return r.n === n;
    };
    await waitFor("every probe up", upCount, 60_000);
    await flip(target, hook, n, flips, 60_000);
    for (const type of ["probe.down", "probe.recovered"]) {
      const d = await delays(handle.db, hook.arrivals, type);
      console.log(
        `time to alert, ${type.padEnd(15)} ${d.length} alerts: p50 ${percentile(d, 0.5)} ms, ` +
          `p99 ${percentile(d, 0.99)} ms, max ${Math.max(...d)} ms`,
      );
      printStages(await stagesOf(handle.db, hook.arrivals, type));
    }
    console.log(`load: ${loadAverage()}`);
  } finally {
    await base.stop();
    await handle.close();
    await hook.close();
    await target.close();
    await database.drop();
  }
}

async function scalePart() {
  const n = Number(args.probes);
  const duration = Number(args.duration) * 1000;
  const database = await createPostgresDatabase(ADMIN_URL, "probe_bench");
  const target: Target = await startTarget({ countOnly: true });
  const hook = receiver();
  const base = await server(database.url, { RUNNER: "off" });
  const handle = await openDatabase({ kind: "postgres", url: database.url });
  const runners: ServerProcess[] = [];
  try {
    const db = handle.db;
    await alertTo(base, hook.url);
    await db.insertInto("projects").values({ name: "scale" }).execute();
    // One probe in ten flaps: 500 for 20 s, 200 for 20 s.
    await sql`
      insert into probes (project, probe_id, url, method, headers)
      select 'scale', 's' || i,
        case when i % 10 = 0 then ${target.origin} || '/flap?ms=20000&i=' || i
             else ${target.origin} || '/p/' || i end,
        'GET', '{}'
      from generate_series(1, ${n}::int) as i`.execute(db);
    for (let i = 0; i < 2; i++) {
      runners.push(
        await startServerProcess({
          entry: RUNNER_ENTRY,
          env: {
            DATABASE_URL: database.url,
            PROBE_INTERVAL_SECONDS: "10",
            PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
            LOG_LEVEL: "warn",
          },
          waitReady: false,
        }),
      );
    }
    console.log(`scale: ${n} probes, ${n / 10} flapping, 2 runners, ${duration / 1000} s …`);
    await sleep(duration);
    for (const r of runners) r.kill("SIGTERM");
    await Promise.all(runners.map((r) => r.status));
    await waitFor("the outbox to drain", async () => {
      const { rows: [r] } = await sql<{ n: number }>`
        select count(*)::int as n from notifications where status = 'pending'`.execute(db);
      return r.n === 0;
    }, 120_000);
    const { rows: [t] } = await sql<
      { opened: number; recovered: number; runs: number; down: number; up: number }
    >`
      select (select count(*)::int from incidents) as opened,
        (select count(*)::int from incidents where resolution = 'recovered') as recovered,
        (select count(*)::int from probe_results) as runs,
        (select count(*)::int from notifications where event = 'probe.down') as down,
        (select count(*)::int from notifications where event = 'probe.recovered') as up`
      .execute(db);
    const ids = hook.arrivals.map((a) => a.id);
    const repeats = ids.length - new Set(ids).size;
    const received = (type: string) =>
      new Set(hook.arrivals.filter((a) => a.type === type).map((a) => a.id)).size;
    console.log(`runs recorded:            ${t.runs}`);
    console.log(`transitions in database:  ${t.opened} down, ${t.recovered} recovered`);
    console.log(`notifications written:    ${t.down} down, ${t.up} recovered`);
    console.log(
      `received (unique ids):    ${received("probe.down")} down, ` +
        `${received("probe.recovered")} recovered; ${repeats} repeated deliveries`,
    );
    const exact = t.opened === t.down && t.recovered === t.up &&
      received("probe.down") === t.down && received("probe.recovered") === t.up;
    console.log(exact ? "every transition notified exactly once" : "MISMATCH");
  } finally {
    for (const r of runners) r.kill("SIGKILL");
    await base.stop();
    await handle.close();
    await hook.close();
    await target.close();
    await database.drop();
  }
}

/**
 * A receiver that answers every call with `status` (a redirect to a closed port for 3xx), or,
 * with `hang`, answers nothing until closed.
 */
function badReceiver(status: number, hang = false) {
  let calls = 0;
  const release = new AbortController();
  const held = new Promise<void>((r) => release.signal.addEventListener("abort", () => r()));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    calls++;
    await req.body?.cancel();
    if (hang) await held;
    const location = status >= 300 && status < 400 ? "http://127.0.0.1:9/" : undefined;
    return new Response(null, { status, headers: location ? { location } : undefined });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    calls: () => calls,
    close: () => {
      release.abort();
      return server.shutdown();
    },
  };
}

/** A hanging, a failing, a redirecting and a working receiver side by side. */
async function isolationPart() {
  const n = Number(args.isolation);
  const flips = Number(args.flips);
  const database = await createPostgresDatabase(ADMIN_URL, "probe_bench");
  const target = await startTarget({ countOnly: true });
  const hang = badReceiver(200, true);
  const failing = badReceiver(500);
  const redirecting = badReceiver(302);
  const ok = receiver();
  const base = await server(database.url);
  const handle = await openDatabase({ kind: "postgres", url: database.url });
  try {
    const receivers = { hang: hang.url, failing: failing.url, redirecting: redirecting.url };
    for (const [name, url] of Object.entries(receivers)) {
      await call(base, "POST", "/notification-targets", { name, kind: "webhook", url });
    }
    await call(base, "POST", "/notification-targets", { name: "ok", kind: "webhook", url: ok.url });
    await call(base, "PATCH", "/settings/alerts", {
      targets: ["hang", "failing", "redirecting", "ok"],
      failure_threshold: 1,
      success_threshold: 1,
    });
    await call(base, "POST", "/projects", { project: "iso" });
    for (let i = 0; i < n; i++) {
      await call(base, "POST", "/projects/iso/probes", { url: `${target.origin}/health?i=${i}` });
    }
    const upCount = async () => {
      const { rows: [r] } = await sql<{ n: number }>`
        select count(*)::int as n from probe_schedule where state = 'up'`.execute(handle.db);
      return r.n === n;
    };
    await waitFor("every probe up", upCount, 60_000);
    console.log(`isolation: ${n} probes, targets hang, failing (500), redirecting (302), ok …`);
    await flip(target, ok, n, flips, 300_000);
    const all: number[] = [];
    for (const type of ["probe.down", "probe.recovered"]) {
      const d = await delays(handle.db, ok.arrivals, type);
      all.push(...d);
      console.log(
        `working target, ${type.padEnd(15)} ${d.length} alerts: p50 ${percentile(d, 0.5)} ms, ` +
          `p99 ${percentile(d, 0.99)} ms, max ${Math.max(...d)} ms`,
      );
    }
    console.log(
      `working target, all ${all.length} alerts: p50 ${percentile(all, 0.5)} ms, ` +
        `p99 ${percentile(all, 0.99)} ms, max ${Math.max(...all)} ms`,
    );
    const { rows } = await sql<{ target: string; status: string; n: number }>`
      select target, status, count(*)::int as n from notifications
      group by target, status order by target, status`.execute(handle.db);
    console.log(`outbox: ${rows.map((r) => `${r.target} ${r.status} ${r.n}`).join(", ")}`);
    console.log(
      `calls: hang ${hang.calls()}, failing ${failing.calls()}, ` +
        `redirecting ${redirecting.calls()}, ok ${ok.arrivals.length}`,
    );
  } finally {
    await base.stop();
    await handle.close();
    await Promise.all([hang.close(), failing.close(), redirecting.close(), ok.close()]);
    await target.close();
    await database.drop();
  }
}

/** Reads `path` with `clients` callers back to back until `stop`; each read's milliseconds. */
async function readWithout(
  base: ServerProcess,
  path: string,
  clients: number,
  stop: Promise<unknown>,
) {
  let stopped = false;
  stop.then(() => stopped = true);
  const times: number[] = [];
  await Promise.all(Array.from({ length: clients }, async () => {
    while (!stopped) {
      const started = performance.now();
      await call(base, "GET", path);
      times.push(performance.now() - started);
    }
  }));
  return times;
}

/** How long another project is read from the hanging part's first flip. */
const READ_MS = 40_000;

/** `--hanging` silent receivers and a working one; the working one's delay, another's reads. */
async function hangingPart() {
  const n = Number(args.isolation);
  const flips = Number(args.flips);
  const embedded = args.database === "embedded";
  const database = embedded ? null : await createPostgresDatabase(ADMIN_URL, "probe_bench");
  const dataDir = embedded ? await Deno.makeTempDir({ prefix: "bench-hanging-" }) : null;
  const target = await startTarget({ countOnly: true });
  const silent = Array.from({ length: Number(args.hanging) }, silentReceiver);
  const ok = receiver();
  const base = await startServerProcess({
    env: {
      ...(database ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir! }),
      SERVICE_API_KEY: KEY,
      PROBE_INTERVAL_SECONDS: "10",
      PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
      RATE_LIMIT_PER_SECOND: "0",
      LOG_LEVEL: "warn",
    },
  });
  try {
    const names = silent.map((_, i) => `hang${i}`);
    for (const [i, r] of silent.entries()) {
      await call(base, "POST", "/notification-targets", {
        name: names[i],
        kind: "webhook",
        url: r.url,
      });
    }
    await call(base, "POST", "/notification-targets", { name: "ok", kind: "webhook", url: ok.url });
    await call(base, "PATCH", "/settings/alerts", {
      targets: ["ok"],
      failure_threshold: 1,
      success_threshold: 1,
    });
    // A policy names at most 20 targets: each flipping project names 15 silent ones and "ok".
    const projects = Array.from({ length: Math.ceil(names.length / 15) || 1 }, (_, j) => `iso${j}`);
    for (const [j, project] of projects.entries()) {
      await call(base, "POST", "/projects", { project });
      await call(base, "PATCH", `/projects/${project}/alerts`, {
        targets: [...names.slice(j * 15, j * 15 + 15), "ok"],
      });
    }
    await call(base, "POST", "/projects", { project: "other" });
    for (let i = 0; i < n; i++) {
      const project = projects[i % projects.length];
      await call(base, "POST", `/projects/${project}/probes`, {
        url: `${target.origin}/health?i=${i}`,
      });
      await call(base, "POST", "/projects/other/probes", { url: `${target.origin}/p?i=${i}` });
    }
    const allUp = async () => {
      let up = 0;
      for (const project of projects) {
        const { data } = await call(base, "GET", `/projects/${project}/probes`);
        up += data.filter((p: { state: string }) => p.state === "up").length;
      }
      return up === n;
    };
    await waitFor("every probe up", allUp, 60_000);
    console.log(
      `hanging receivers (${args.database}): ${silent.length} silent targets and one working, ` +
        `${n} probes flipping, another project read by 2 clients …`,
    );
    // The same span of reads whatever the flips take: READ_MS from the first flip.
    const cpuFrom = await base.cpuSeconds();
    const window = sleep(READ_MS).then(() => base.cpuSeconds());
    const reads = readWithout(base, "/projects/other/probes", 2, window);
    await flip(target, ok, n, flips, 300_000);
    const times = await reads;
    const cpu = await window - cpuFrom;
    const delays = ok.arrivals.map((a) => a.at - Date.parse(a.timestamp));
    const ms = (v: number) => `${Math.round(v)} ms`;
    console.log(
      `working target, ${delays.length} alerts: p50 ${ms(percentile(delays, 0.5))}, ` +
        `p99 ${ms(percentile(delays, 0.99))}, max ${ms(Math.max(...delays))}`,
    );
    console.log(
      `other project's reads, ${times.length}: p50 ${ms(percentile(times, 0.5))}, ` +
        `p90 ${ms(percentile(times, 0.9))}, p99 ${ms(percentile(times, 0.99))}, ` +
        `max ${ms(Math.max(...times))}; the server's CPU time meanwhile ${cpu.toFixed(1)} s`,
    );
    console.log(
      `connections the silent receivers accepted: ${silent.map((r) => r.accepted()).join(" ")}`,
    );
  } finally {
    await base.stop();
    silent.forEach((r) => r.close());
    await ok.close();
    await target.close();
    await database?.drop();
    if (dataDir) await Deno.remove(dataDir, { recursive: true });
  }
}

/** Each notification's stages, from the run that moved the state to its arrival (ms). */
interface Stages {
  runEnd: number;
  recording: number;
  sent: number;
  arrived: number;
}

/** The stages of every arrival of `type` (by its `webhook-id`), from the database's records. */
async function stagesOf(db: Db, arrivals: Arrival[], type: string): Promise<Stages[]> {
  const column = type === "probe.down" ? "started_at" : "resolved_at";
  const { rows } = await sql<{ id: string; ended: Date; created_at: Date; attempted_at: Date }>`
    select n.id, r.started_at + r.duration_ms * interval '1 millisecond' as ended,
      n.created_at, a.attempted_at
    from notifications n
    join incidents i on i.id = n.incident_id
    join probe_results r on r.probe_key = i.probe_key and r.started_at = i.${sql.ref(column)}
    join notification_attempts a on a.notification_id = n.id and a.outcome = 'delivered'
    where n.event = ${type}`.execute(db);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return arrivals.flatMap((a) => {
    const r = a.type === type ? byId.get(a.id) : undefined;
    if (!r) return [];
    return [{
      runEnd: new Date(r.ended).getTime(),
      recording: new Date(r.created_at).getTime(),
      sent: new Date(r.attempted_at).getTime(),
      arrived: a.at,
    }];
  });
}

/** p50, p99 and max of each stage and of the whole, one line each. */
function printStages(stages: Stages[]) {
  const line = (what: string, values: number[]) =>
    console.log(
      `  ${what.padEnd(28)} p50 ${String(percentile(values, 0.5)).padStart(5)} ms, ` +
        `p99 ${String(percentile(values, 0.99)).padStart(5)} ms, ` +
        `max ${String(Math.max(...values)).padStart(5)} ms`,
    );
  line("run end → recording", stages.map((s) => s.recording - s.runEnd));
  line("recording → send started", stages.map((s) => s.sent - s.recording));
  line("send started → arrival", stages.map((s) => s.arrived - s.sent));
  line("run end → arrival", stages.map((s) => s.arrived - s.runEnd));
}

/** `--down` probes failing at once, `--targets` targets each, the API read meanwhile. */
async function downPart() {
  const n = Number(args.down);
  const targets = Number(args.targets);
  const database = await createPostgresDatabase(ADMIN_URL, "probe_bench");
  const target = await startTarget({ countOnly: true });
  const hooks = Array.from({ length: targets }, receiver);
  const base = await server(database.url, serverEnv());
  const handle = await openDatabase({ kind: "postgres", url: database.url });
  try {
    const db = handle.db;
    const names = hooks.map((_, i) => `hook${i}`);
    for (const [i, hook] of hooks.entries()) {
      await call(base, "POST", "/notification-targets", {
        name: names[i],
        kind: "webhook",
        url: hook.url,
      });
    }
    await call(base, "PATCH", "/settings/alerts", {
      targets: names,
      failure_threshold: 1,
      success_threshold: 1,
    });
    await call(base, "POST", "/projects", { project: "down" });
    await call(base, "POST", "/projects", { project: "other" });
    for (let i = 0; i < 10; i++) {
      await call(base, "POST", "/projects/other/probes", { url: `${target.origin}/p?i=${i}` });
    }
    await sql`
      insert into probes (project, probe_id, url, method, headers)
      select 'down', 'd' || i, ${target.origin} || '/health?i=' || i, 'GET', '{}'
      from generate_series(1, ${n}::int) as i`.execute(db);
    await waitFor("every probe up", async () => {
      const { rows: [r] } = await sql<{ n: number }>`
        select count(*)::int as n from probe_verdicts v join probes p on p.key = v.probe_key
        where p.project = 'down' and v.state = 'up'`.execute(db);
      return r.n === n;
    }, 120_000);
    console.log(
      `down at once: ${n} probes (every 10 s), ${targets} targets each, ` +
        `another project's probes read back to back; load: ${loadAverage()}`,
    );
    const cpuFrom = await base.cpuSeconds();
    let delivered = () => false;
    const done = waitFor("every notification", () => delivered(), 180_000);
    delivered = () => hooks.every((h) => new Set(h.arrivals.map((a) => a.id)).size >= n);
    target.setHealth(500, { status: "DOWN" });
    const reads = readWithout(base, "/projects/other/probes", 1, done);
    await done;
    const times = await reads;
    const cpu = await base.cpuSeconds() - cpuFrom;
    // Anything sent twice would arrive by now.
    await sleep(2_000);
    const { rows: [t] } = await sql<{ opened: number; written: number }>`
      select (select count(*)::int from incidents) as opened,
        (select count(*)::int from notifications where event = 'probe.down') as written`
      .execute(db);
    for (const [i, h] of hooks.entries()) {
      const ids = h.arrivals.map((a) => a.id);
      console.log(
        `  ${names[i]}: ${new Set(ids).size} notifications, ${
          ids.length - new Set(ids).size
        } repeated`,
      );
    }
    const all = hooks.flatMap((h) => h.arrivals);
    const unique = new Set(all.map((a) => a.id)).size;
    console.log(
      `  incidents ${t.opened}, notifications written ${t.written}, received ${unique} ` +
        (t.opened === n && t.written === n * targets && unique === n * targets &&
            all.length === unique
          ? "(every one once)"
          : "(MISMATCH)"),
    );
    const stages = (await Promise.all(hooks.map((h) => stagesOf(db, h.arrivals, "probe.down"))))
      .flat();
    const ends = stages.map((s) => s.runEnd);
    console.log(
      `  ${stages.length} arrivals; the failing runs ended over ` +
        `${((Math.max(...ends) - Math.min(...ends)) / 1000).toFixed(1)} s`,
    );
    printStages(stages);
    const ms = (v: number) => `${Math.round(v)} ms`;
    console.log(
      `  API reads meanwhile, ${times.length}: p50 ${ms(percentile(times, 0.5))}, ` +
        `p99 ${ms(percentile(times, 0.99))}, max ${ms(Math.max(...times))}; ` +
        `the server's CPU time ${cpu.toFixed(1)} s; load after: ${loadAverage()}`,
    );
    // All the service's CPU from the flip to the last arrival (its runner, the recording, the
    // API reads and the sends) over what it sent; the sends' own below (`sendsAlone`).
    console.log(
      `  CPU per notification, all of it: ${(cpu * 1000 / Math.max(1, unique)).toFixed(2)} ms ` +
        `(user+sys ${cpu.toFixed(1)} s / ${unique})`,
    );
    await sendsAlone(base, db, hooks, n * targets);
  } finally {
    await base.stop();
    await handle.close();
    await Promise.all(hooks.map((h) => h.close()));
    await target.close();
    await database.drop();
  }
}

/**
 * The CPU of the sends alone: with every probe down and nothing read, the service's steady rate
 * over 5 s, then the burst's `count` notifications written again at once (new ids) and sent;
 * the service's CPU until they all arrived, less the steady rate, per notification (the claims,
 * the sends, the records).
 */
async function sendsAlone(
  base: ServerProcess,
  db: Db,
  hooks: { arrivals: Arrival[] }[],
  count: number,
) {
  const arrived = () => hooks.reduce((sum, h) => sum + h.arrivals.length, 0);
  const before = arrived();
  const steadyFrom = await base.cpuSeconds();
  const steadyStart = performance.now();
  await sleep(5_000);
  const steadyPerMs = (await base.cpuSeconds() - steadyFrom) / (performance.now() - steadyStart);
  const cpuFrom = await base.cpuSeconds();
  const started = performance.now();
  await sql`
    with again as (
      insert into notifications (id, event, target, incident_id, payload)
      select 'msg_again' || substr(id, 5), event, target, incident_id, payload
      from notifications where event = 'probe.down'
      returning 1
    )
    select count(*), pg_notify('notifications_due', '') from again`.execute(db);
  await waitFor("the notifications written again", () => arrived() >= before + count, 180_000);
  const ms = performance.now() - started;
  const cpu = await base.cpuSeconds() - cpuFrom - steadyPerMs * ms;
  console.log(
    `  sends alone: ${count} written at once, all arrived in ${(ms / 1000).toFixed(1)} s; ` +
      `CPU per notification ${(cpu * 1000 / count).toFixed(2)} ms (beyond the steady ` +
      `${(steadyPerMs * 1000).toFixed(2)} CPU s/s); load: ${loadAverage()}`,
  );
}

/** More settings for the service under test, as JSON in `BENCH_SERVER_ENV` (`{"NOTIFY_CONCURRENCY":"60"}`). */
function serverEnv(): Record<string, string> {
  return JSON.parse(Deno.env.get("BENCH_SERVER_ENV") ?? "{}");
}

/** The machine's load average (1, 5 and 15 minutes), as `uptime` says it. */
function loadAverage(): string {
  return Deno.loadavg().map((v) => v.toFixed(2)).join(", ");
}

if (args.part === "down") await downPart();
else if (args.part === "hanging") await hangingPart();
else if (args.part === "isolation") await isolationPart();
else {
  if (args.part !== "scale") await latencyPart();
  if (args.part !== "latency") await scalePart();
}
