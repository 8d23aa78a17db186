/**
 * `deno task bench:memory`: the server's resident memory (RSS) from start to some minutes of
 * 1,000 probes (3 by default; `--minutes 10` for the figure the service is held to, 30 for a
 * soak). It starts the real server (`server/main.ts`, as `deno
 * task start` does) on a fresh `DATA_DIR`, the embedded database unless `--database-url` names a
 * PostgreSQL server, with a loopback target that answers a few bytes. The first start creates
 * the database and a project; the server stops and starts again on it, idles, then gets the
 * probes. It prints RSS right after each start and the peak during it, idle RSS a minute after
 * start with one project and, then and once the probes exist each minute: RSS (anonymous and
 * file-backed), the server's V8 heap, the probe thread's and, embedded, the database thread's heap
 * and WebAssembly memory (from `/metrics`), what is left of RSS beside them (code, malloc,
 * stacks), and each OS thread's CPU time; then the peak, the growth from minute
 * 2 and from minute 5 to the end, and whether RSS was flat after minute 5 (fitted growth under
 * 1 MiB a minute).
 *
 *   deno task bench:memory [--minutes 3] [--probes 1000] [--interval 60] [--idle-seconds 60]
 *                          [--database-url postgres://…] [--server-dir DIR] [--show-output]
 *                          [--v8-flags FLAGS]
 *
 * `MEMORY_MINUTES` sets the minutes when `--minutes` is not given.
 *
 * Not a test: RSS depends on the machine, the Deno version and what else runs.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { createPostgresDatabase } from "../server/testing/app.ts";
import { memoryOf, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { startEntry, startTaskOf } from "./setup.ts";

const KEY = "bench-memory-key-0123456789";
const PROJECT = "memory";
const SAMPLE_MS = 5_000;
/** From this minute on, RSS should be flat: fitted growth under {@link FLAT_MIB_PER_MIN}. */
const FLAT_FROM_MINUTE = 5;
const FLAT_MIB_PER_MIN = 1;

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    minutes: { type: "string", default: Deno.env.get("MEMORY_MINUTES") ?? "3" },
    probes: { type: "string", default: "1000" },
    interval: { type: "string", default: "60" },
    "idle-seconds": { type: "string", default: "60" },
    "database-url": { type: "string" },
    "server-dir": { type: "string" },
    "show-output": { type: "boolean" },
    "v8-flags": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  console.log(`deno task bench:memory [--minutes 3] [--probes 1000] [--interval 60]
                       [--idle-seconds 60] [--database-url URL] [--server-dir DIR]
                       [--show-output] [--v8-flags FLAGS]

Starts server/main.ts on a fresh DATA_DIR (the embedded database, or a database of its own on
the PostgreSQL server --database-url names, dropped afterwards), with a loopback target, and
prints its RSS: after start, idle with one project, then with --probes probes every --interval
seconds for --minutes minutes (MEMORY_MINUTES when not given; --minutes 10 for the figure the
service is held to), each minute with the V8 heaps and the WebAssembly memory /metrics gives, the
rest of RSS beside them, and each thread's CPU time. --server-dir runs another copy of the service (its server/main.ts)
with the same bench, to compare versions. --show-output passes the server's output (LOG_LEVEL=warn
unless set) through. The server runs with the V8 flags and variables of the service's \`deno task
start\` (its deno.json), or with --v8-flags=FLAGS instead.`);
  Deno.exit(0);
}
const MINUTES = Number(args.minutes);
const PROBES = Number(args.probes);
const INTERVAL_S = Number(args.interval);
const IDLE_S = Number(args["idle-seconds"]);
for (const [name, value] of Object.entries({ MINUTES, PROBES, INTERVAL_S, IDLE_S })) {
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number`);
}
const serverDir = args["server-dir"] ?? new URL("..", import.meta.url).pathname;
const startTask = startTaskOf(serverDir);
/** The V8 flags the server runs with: `--v8-flags`, or those of its `deno task start`. */
const v8Flags = args["v8-flags"] ?? startTask.v8Flags;
// The server as `deno task start` runs it: its bundle, built first where the task builds one.
const entry = await startEntry(serverDir);

const mib = (kib: number) => kib / 1024;
const fmt = (kib: number) => `${mib(kib).toFixed(0)} MiB`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(service: ServerProcess, path: string, body: unknown): Promise<number> {
  const res = await fetch(`${service.url}/api/v1${path}`, {
    method: "POST",
    headers: { "x-service-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await res.body?.cancel();
  return res.status;
}

/** Creates the probes through the API, a few requests at a time. */
async function createProbes(service: ServerProcess, origin: string) {
  let next = 0;
  const worker = async () => {
    while (next < PROBES) {
      const i = next++;
      const status = await call(service, `/projects/${PROJECT}/probes`, {
        url: `${origin}/ok?probe=${i}`,
      });
      if (status !== 201) throw new Error(`creating probe ${i} answered ${status}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** Series of the server's `/metrics` that tell its memory apart, by their names there. */
const HEAP_SERIES = {
  serverHeapUsed: "nodejs_heap_size_used_bytes",
  serverHeapTotal: "nodejs_heap_size_total_bytes",
  dbHeapUsed: "embedded_db_heap_used_bytes",
  dbHeapTotal: "embedded_db_heap_total_bytes",
  wasm: "embedded_db_wasm_memory_bytes",
  probeHeapUsed: "runner_thread_heap_used_bytes",
  probeHeapTotal: "runner_thread_heap_total_bytes",
};

/** The heap figures of the server's `/metrics`, in MiB ("-" for a series it does not have). */
async function heaps(service: ServerProcess): Promise<Record<keyof typeof HEAP_SERIES, string>> {
  const res = await fetch(`${service.url}/metrics`, { headers: { "x-service-api-key": KEY } });
  const text = await res.text();
  const value = (name: string) => {
    const found = new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1];
    return found === undefined ? "-" : (Number(found) / 2 ** 20).toFixed(0);
  };
  return Object.fromEntries(
    Object.entries(HEAP_SERIES).map(([key, name]) => [key, value(name)]),
  ) as Record<keyof typeof HEAP_SERIES, string>;
}

/** RSS split as /proc gives it: anonymous (heaps, WebAssembly, malloc) and file-backed (code). */
async function rssParts(pid: number): Promise<{ anonKiB: number; fileKiB: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const field = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+)`, "m"))?.[1]);
  return { anonKiB: field("RssAnon"), fileKiB: field("RssFile") };
}

/**
 * Each OS thread of the process with its CPU time so far (the threads share one address space,
 * so RSS has no per-thread split; their isolates' heaps are in `/metrics`).
 */
async function threadTimes(pid: number): Promise<string> {
  const byName = new Map<string, { count: number; seconds: number }>();
  for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
    try {
      const stat = await Deno.readTextFile(`/proc/${pid}/task/${task.name}/stat`);
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
      const entry = byName.get(name) ?? { count: 0, seconds: 0 };
      entry.count += 1;
      entry.seconds += (Number(fields[11]) + Number(fields[12])) / 100;
      byName.set(name, entry);
    } catch {
      // The thread ended while being read.
    }
  }
  return [...byName].sort((a, b) => b[1].seconds - a[1].seconds)
    .map(([name, { count, seconds }]) =>
      `${name}${count > 1 ? `×${count}` : ""} ${seconds.toFixed(1)} s`
    )
    .join(", ");
}

/** One line of the process's memory by part, and one of its threads' CPU times. */
async function breakdown(service: ServerProcess, label: string) {
  const [{ rssKiB }, parts, h, threads] = await Promise.all([
    memoryOf(service.pid),
    rssParts(service.pid),
    heaps(service),
    threadTimes(service.pid),
  ]);
  const known = [h.serverHeapTotal, h.dbHeapTotal, h.probeHeapTotal, h.wasm].map(Number)
    .filter(Number.isFinite)
    .reduce((a, b) => a + b, 0);
  row(
    `${label}: by part`,
    `RSS ${fmt(rssKiB)} (anonymous ${fmt(parts.anonKiB)}, files ${fmt(parts.fileKiB)}); ` +
      `server isolate heap ${h.serverHeapUsed}/${h.serverHeapTotal} MiB, database thread heap ` +
      `${h.dbHeapUsed}/${h.dbHeapTotal} MiB, probe thread heap ${h.probeHeapUsed}/` +
      `${h.probeHeapTotal} MiB, PGlite WebAssembly memory ${h.wasm} MiB (reserved, ` +
      `not all resident); the rest ${(mib(rssKiB) - known).toFixed(0)} MiB`,
  );
  row(`${label}: threads (CPU time)`, threads);
}

/** Least-squares slope of RSS over time, in MiB per minute. */
function slope(samples: { minute: number; kib: number }[]): number {
  if (samples.length < 2) return NaN;
  const n = samples.length;
  const mx = samples.reduce((s, p) => s + p.minute, 0) / n;
  const my = samples.reduce((s, p) => s + mib(p.kib), 0) / n;
  let num = 0;
  let den = 0;
  for (const p of samples) {
    num += (p.minute - mx) * (mib(p.kib) - my);
    den += (p.minute - mx) ** 2;
  }
  return num / den;
}

const adminUrl = args["database-url"];
const database = adminUrl ? await createPostgresDatabase(adminUrl, "probe_bench") : undefined;
const dataDir = await Deno.makeTempDir({ prefix: "probe-memory-" });
const target = await startTarget({ countOnly: true });
const backend = database ? "PostgreSQL" : "embedded (PGlite)";
console.log(
  `bench:memory  ${backend}  server ${serverDir}  probes=${PROBES} interval=${INTERVAL_S}s ` +
    `v8-flags=${v8Flags ?? "none"} ${
      Object.entries(startTask.env).map(([name, value]) => `${name}=${value} `).join("")
    }` +
    `minutes=${MINUTES}  ${navigator.hardwareConcurrency} CPUs, load ${
      Deno.loadavg().map((n) => n.toFixed(2)).join(" ")
    }`,
);

let service: ServerProcess | undefined;
const rows: [string, string][] = [];
const row = (label: string, value: string) => {
  rows.push([label, value]);
  console.log(`  ${label}: ${value}`);
};
/** Starts the server; prints its RSS right after start and its peak during start. */
async function start(which: string): Promise<ServerProcess> {
  const started = performance.now();
  const server = await startServerProcess({
    entry,
    cwd: serverDir,
    env: {
      ...startTask.env,
      NODE_ENV: "production",
      DATABASE_URL: database?.url ?? "",
      SERVICE_API_KEY: KEY,
      DATA_DIR: dataDir,
      PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
      PROBE_INTERVAL_SECONDS: String(INTERVAL_S),
      LOG_LEVEL: Deno.env.get("LOG_LEVEL") ?? "warn",
    },
    readyTimeoutMs: 120_000,
    output: args["show-output"] ? "inherit" : "null",
    ...(v8Flags && { denoFlags: [`--v8-flags=${v8Flags}`] }),
  });
  const { rssKiB, peakKiB } = await memoryOf(server.pid);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  row(`${which}: RSS right after start (${seconds} s)`, fmt(rssKiB));
  row(`${which}: peak during start (VmHWM)`, fmt(peakKiB));
  return server;
}

try {
  // The first start creates the database (and, embedded, the data folder); a later start is
  // what a server that has been running for a while restarts into.
  service = await start("First start");
  const created = await call(service, "/projects", { project: PROJECT });
  if (created !== 201) throw new Error(`creating the project answered ${created}`);
  await service.stop();
  service = undefined;
  service = await start("Second start");
  const pid = service.pid;

  await sleep(IDLE_S * 1000);
  const idle = await memoryOf(pid);
  row(`Idle, one project, after ${IDLE_S} s`, fmt(idle.rssKiB));
  await breakdown(service, "Idle");

  const creating = performance.now();
  await createProbes(service, target.origin);
  const afterCreate = await memoryOf(pid);
  row(
    `After creating ${PROBES} probes (${((performance.now() - creating) / 1000).toFixed(1)} s)`,
    fmt(afterCreate.rssKiB),
  );

  const hitsBefore = target.counts.get("/ok") ?? 0;
  const t0 = performance.now();
  const samples: { minute: number; kib: number }[] = [];
  const marks = Array.from({ length: Math.ceil(MINUTES) }, (_, i) => Math.min(i + 1, MINUTES));
  let peak = afterCreate.rssKiB;
  for (const mark of marks) {
    for (;;) {
      const minute = (performance.now() - t0) / 60_000;
      const { rssKiB } = await memoryOf(pid);
      samples.push({ minute, kib: rssKiB });
      peak = Math.max(peak, rssKiB);
      if (minute >= mark) {
        const h = await heaps(service);
        row(
          `With probes, minute ${mark}`,
          `${fmt(rssKiB)}  (server heap ${h.serverHeapUsed}/${h.serverHeapTotal} MiB, ` +
            `database thread heap ${h.dbHeapUsed}/${h.dbHeapTotal} MiB, probe thread heap ` +
            `${h.probeHeapUsed}/${h.probeHeapTotal} MiB, WebAssembly ${h.wasm} MiB)`,
        );
        break;
      }
      await sleep(Math.min(SAMPLE_MS, Math.max(50, (mark - minute) * 60_000)));
    }
  }
  await breakdown(service, `With probes, minute ${MINUTES}`);
  const checks = (target.counts.get("/ok") ?? 0) - hitsBefore;
  row("Peak with probes (sampled every 5 s)", fmt(peak));
  row("Peak of the second start's process (VmHWM)", fmt((await memoryOf(pid)).peakKiB));
  const growth = (from: number) => {
    const tail = samples.filter((s) => s.minute >= from);
    const end = tail[tail.length - 1].kib;
    const range = tail.map((s) => mib(s.kib));
    row(
      `Growth, minute ${from} to the end`,
      `${((mib(end) - mib(tail[0].kib)) / (MINUTES - from)).toFixed(2)} MiB/min end to end, ` +
        `${slope(tail).toFixed(2)} MiB/min fitted; ${Math.min(...range).toFixed(0)}-` +
        `${Math.max(...range).toFixed(0)} MiB`,
    );
    return slope(tail);
  };
  if (MINUTES > 2) growth(2);
  if (MINUTES > FLAT_FROM_MINUTE + 1) {
    const flat = growth(FLAT_FROM_MINUTE) < FLAT_MIB_PER_MIN;
    row(
      `Flat after minute ${FLAT_FROM_MINUTE}`,
      `${flat ? "yes" : "NO"} (fitted growth under ${FLAT_MIB_PER_MIN} MiB/min)`,
    );
  }
  const minutes = (performance.now() - t0) / 60_000;
  row("Checks the target answered", `${checks} (${(checks / minutes).toFixed(0)} a minute)`);

  console.log(`\n| ${backend} | RSS |\n| --- | ---: |`);
  for (const [label, value] of rows) console.log(`| ${label} | ${value} |`);
} finally {
  await service?.stop();
  await target.close();
  await database?.drop();
  await Deno.remove(dataDir, { recursive: true });
}
