/**
 * `deno task bench:http`: the service against a bare Deno.serve + postgres.js baseline, side by
 * side in one run, on a PostgreSQL database of its own seeded with 1,000 projects x 10 probes.
 *
 * Environment: BENCH_DATABASE_URL (admin URL; default the local 127.0.0.1:5432), BENCH_SECONDS
 * (5 per measurement), BENCH_ROUNDS (3 measurements per side, in alternating order; figures
 * combine them: requests/s over all, median p50, worst p99), BENCH_WARMUP_SECONDS (3),
 * BENCH_PAIR_ROUNDS (6 rounds of each side for the ratio to the stack floor, below),
 * BENCH_CONNECTIONS (64), BENCH_THREADS (wrk threads, 1), BENCH_POOL_SIZE (postgres.js pool of
 * both servers, 10), BENCH_ONLY (a scenario name, or part of names, to run alone), BENCH_CPU_PROF
 * (a folder: the service, or the floor, writes a V8 CPU profile under it, one per scenario,
 * in `service/` or `floor/`), BENCH_FLOOR_WITHOUT
 * (libraries the floor row leaves out: `WITHOUT` of `floor.ts`), BENCH_V8_FLAGS (V8 flags of the
 * service and the floor, comma-separated, `none` for V8's defaults; `deno task start`'s by default).
 *
 * Each scenario runs on a fresh service and a fresh baseline (see `runScenario`).
 *
 * The "stack floor" row answers the project read through the service's libraries alone
 * (`floor.ts`: Deno.serve, Hono, tRPC, zod, Kysely, postgres.js, none of the service's own request
 * path): as near the baseline as the chosen stack lets the service come. When both run, a service
 * and a floor are then run side by side, and the REST read's CPU per request over the floor's is
 * printed with its p99 (targets: 1.5 or less, p99 under 25 ms; see `runFloorPair`).
 *
 * A last row, "hello world (connection layer)", answers "hello" through a bare Deno.serve (base)
 * and through the service's connection layer alone (svc: `server/edge/serve.ts` on node:http), so
 * that what the connection safety costs can be told from what the service's own code costs.
 */
import {
  BENCH_KEY,
  benchSettings,
  envNumber,
  loadNote,
  mib,
  PROBES_PER_PROJECT,
  PROJECTS,
  requireWrk,
  seededDatabase,
  speedNote,
  startBaseline,
  startFloor,
  startHello,
  startService,
  startTaskOf,
} from "./setup.ts";
import { probeUrlAt, projectAt } from "./seed.ts";
import { runWrk, type WrkRequest, type WrkResult } from "./wrk.ts";
import type { ServerProcess } from "../server/testing/process.ts";

interface Scenario {
  name: string;
  /** The least ratio to the baseline's requests/s that is acceptable, when there is a target. */
  minRatio?: number;
  maxP99Ms?: number;
  /** The status every answer must have. */
  status: number;
  /** What answers on the service's side: the service, or the stack's floor (`floor.ts`). */
  side?: "service" | "floor";
  /**
   * The key the service is called with: the configured one (`SERVICE_API_KEY`), or an admin key
   * made through the API at the start (`stored`: looked up by digest, kept a second), or a
   * dashboard session's cookie (`session`: signed in with the configured key, kept a second).
   */
  key?: "configured" | "stored" | "session";
  request: (i: number) => WrkRequest;
}

const project = (i: number) => projectAt(i % PROJECTS);
/** The libraries the floor row leaves out (`WITHOUT` of `floor.ts`); none by default. */
const floorWithout = Deno.env.get("BENCH_FLOOR_WITHOUT") ?? "";
/** The name of the hello-world row. */
const HELLO = "hello world (connection layer)";
/** The REST read, and the floor's row that answers it through the stack alone. */
const READ = "REST GET /api/v1/projects/{project}";
const FLOOR = `${READ}: stack floor${floorWithout ? ` without ${floorWithout}` : ""}`;
/** The service's CPU per request over the floor's, at most; and the read's p99 (ms) under. */
const FLOOR_TARGET = { ratio: 1.5, p99Ms: 25 };
/**
 * The V8 flags of the service and the floor alike: those `deno task start` runs the service with
 * (its heap settings trade throughput for memory, and both sides should pay the same), or
 * `BENCH_V8_FLAGS` (comma-separated as `--v8-flags` takes them; `none` for V8's defaults).
 */
const benchV8Flags = Deno.env.get("BENCH_V8_FLAGS") ?? startTaskOf().v8Flags ?? "none";
const v8Flags = benchV8Flags === "none" ? [] : [`--v8-flags=${benchV8Flags}`];

const SCENARIOS: Scenario[] = [
  {
    name: READ,
    minRatio: 0.6,
    maxP99Ms: 20,
    status: 200,
    request: (i) => ({ method: "GET", path: `/api/v1/projects/${project(i)}` }),
  },
  {
    name: "REST GET /api/v1/projects/{project}: stored key",
    status: 200,
    key: "stored",
    request: (i) => ({ method: "GET", path: `/api/v1/projects/${project(i)}` }),
  },
  {
    name: "REST GET /api/v1/projects/{project}: dashboard session",
    status: 200,
    key: "session",
    request: (i) => ({ method: "GET", path: `/api/v1/projects/${project(i)}` }),
  },
  {
    name: FLOOR,
    side: "floor",
    status: 200,
    request: (i) => ({ method: "GET", path: `/api/v1/projects/${project(i)}` }),
  },
  {
    name: "REST GET /api/v1/projects/{project}/probes",
    status: 200,
    request: (i) => ({ method: "GET", path: `/api/v1/projects/${project(i)}/probes` }),
  },
  {
    name: "REST GET /api/v1/probes?project=",
    status: 200,
    request: (i) => ({ method: "GET", path: `/api/v1/probes?project=${project(i)}` }),
  },
  {
    name: "REST POST /api/v1/projects/{project}/probes (rewrite)",
    status: 200,
    request: (i) => ({
      method: "POST",
      path: `/api/v1/projects/${project(i)}/probes`,
      body: JSON.stringify({ url: probeUrlAt(i % PROBES_PER_PROJECT), latency: 500 }),
    }),
  },
  {
    name: "tRPC GET /trpc/projects.get",
    minRatio: 0.7,
    status: 200,
    request: (i) => ({
      method: "GET",
      path: `/trpc/projects.get?input=${
        encodeURIComponent(JSON.stringify({ project: project(i) }))
      }`,
    }),
  },
];

const HEADERS = { "x-service-api-key": BENCH_KEY, "content-type": "application/json" };

/** An admin key made through the service's API, for the `stored` scenarios. */
async function storedKey(base: string): Promise<string> {
  const response = await fetch(`${base}/api/v1/api-keys`, {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify({ name: `bench-${crypto.randomUUID().slice(0, 8)}`, role: "admin" }),
  });
  const answer = await response.json();
  if (response.status !== 201) throw new Error(`making a key: ${JSON.stringify(answer)}`);
  return answer.data.key;
}

/** The cookie of a dashboard session signed in with the configured key (`session` scenarios). */
async function sessionCookie(base: string): Promise<string> {
  const response = await fetch(`${base}/auth/sign-in`, {
    method: "POST",
    headers: { origin: base, "content-type": "application/json" },
    body: JSON.stringify({ api_key: BENCH_KEY }),
  });
  const cookie = response.headers.get("set-cookie")?.split(";")[0];
  if (response.status !== 200 || !cookie) throw new Error(`signing in: ${await response.text()}`);
  return cookie;
}

/** One request of the scenario, to check its status before measuring. */
async function checkStatus(
  base: string,
  scenario: Scenario,
  headers: Record<string, string> = HEADERS,
): Promise<void> {
  const { method, path, body } = scenario.request(7);
  const response = await fetch(`${base}${path}`, { method, headers, body });
  const text = await response.text();
  if (response.status !== scenario.status) {
    throw new Error(
      `${scenario.name} on ${base} answered ${response.status}, not ${scenario.status}: ${text}`,
    );
  }
}

/**
 * Several runs as one: requests/s over all of them, the median p50 and the worst p99.
 */
function combine(runs: WrkResult[]): WrkResult {
  const sum = (f: (r: WrkResult) => number) => runs.reduce((a, r) => a + f(r), 0);
  const p50s = runs.map((r) => r.p50Ms).sort((a, b) => a - b);
  return {
    requests: sum((r) => r.requests),
    seconds: sum((r) => r.seconds),
    rps: sum((r) => r.requests) / sum((r) => r.seconds),
    p50Ms: p50s[Math.floor(p50s.length / 2)],
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    maxMs: Math.max(...runs.map((r) => r.maxMs)),
    non2xx: sum((r) => r.non2xx),
    socketErrors: sum((r) => r.socketErrors),
  };
}

/** CPU microseconds a process spent per request it answered. */
const cpuUs = (cpuSeconds: number, result: WrkResult) => 1e6 * cpuSeconds / result.requests;

/** Drives a server at `url` with wrk for `seconds`, with the run's connections and threads. */
type Drive = (url: string, seconds: number) => Promise<WrkResult>;

function driver(
  settings: Settings,
  requests: WrkRequest[],
  headers: Record<string, string>,
): Drive {
  return (url, seconds) =>
    runWrk({
      url,
      requests,
      headers,
      connections: settings.connections,
      threads: settings.threads,
      seconds,
    });
}

/** One measured round: wrk's figures and the CPU seconds the process spent meanwhile. */
interface CpuRound {
  result: WrkResult;
  cpu: number;
}

async function cpuRound(
  process: ServerProcess,
  drive: Drive,
  seconds: number,
): Promise<CpuRound> {
  const before = await process.cpuSeconds();
  const result = await drive(process.url, seconds);
  return { result, cpu: (await process.cpuSeconds()) - before };
}

/** Rounds as one: wrk's figures combined, and the CPU seconds summed. */
const resultOf = (rounds: CpuRound[]) => combine(rounds.map((r) => r.result));
const cpuOf = (rounds: CpuRound[]) => rounds.reduce((sum, r) => sum + r.cpu, 0);

/** The requests of a scenario, one for each seeded project, sent in turn. */
const requestsOf = (scenario: Scenario) =>
  Array.from({ length: PROJECTS }, (_, i) => scenario.request(i));
const fmt = (n: number, digits = 1) => n.toFixed(digits);
const row = (cells: string[], widths: number[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");

interface Settings {
  connections: number;
  threads: number;
  poolSize: number;
  seconds: number;
  warmup: number;
  rounds: number;
  /** Rounds of each side in the service-over-floor pair (`BENCH_PAIR_ROUNDS`). */
  pairRounds: number;
  cpuProf: string | undefined;
}

const WIDTHS = [54, 9, 7, 7, 9, 7, 7, 7, 6, 8];

/** Peak resident memory seen so far, in KiB, by side. */
const peaks = { svc: 0, base: 0 };

/**
 * One scenario on a fresh service and a fresh baseline: the baseline's postgres.js pool gets
 * slower the longer it is kept saturated (its queue of busy connections only grows while it never
 * empties: measured 22,900 req/s in its first 6 s, 12,300 after 36 s), so processes kept from one
 * scenario to the next would compare later scenarios with a slowed baseline. Prints the row;
 * answers whether the scenario missed its target.
 */
async function runScenario(
  scenario: Scenario,
  databaseUrl: string,
  dataDir: string,
  settings: Settings,
): Promise<boolean> {
  const { seconds, warmup, rounds, cpuProf } = settings;
  const profileFlags = cpuProf
    ? ["--cpu-prof", `--cpu-prof-dir=${cpuProf}/${scenario.side ?? "service"}`]
    : [];
  const service = scenario.side === "floor"
    ? await startFloor({
      databaseUrl,
      poolSize: settings.poolSize,
      without: floorWithout,
      denoFlags: [...v8Flags, ...profileFlags],
    })
    : await startService({
      databaseUrl,
      poolSize: settings.poolSize,
      dataDir,
      denoFlags: [...v8Flags, ...profileFlags],
    });
  const baseline = await startBaseline({ databaseUrl, poolSize: settings.poolSize });
  try {
    // The baseline takes the configured key alone; the service the scenario's key.
    const svcHeaders: Record<string, string> = scenario.key === "stored"
      ? { ...HEADERS, "x-service-api-key": await storedKey(service.url) }
      : scenario.key === "session"
      ? { "content-type": "application/json", cookie: await sessionCookie(service.url) }
      : HEADERS;
    const requests = requestsOf(scenario);
    const driveBase = driver(settings, requests, HEADERS);
    const driveSvc = driver(settings, requests, svcHeaders);
    await checkStatus(baseline.url, scenario);
    await checkStatus(service.url, scenario, svcHeaders);
    const [bases, svcs] = await alternate(
      rounds,
      warmup,
      cpuSide(baseline, driveBase, seconds),
      cpuSide(service, driveSvc, seconds),
    );
    peaks.svc = Math.max(peaks.svc, (await service.memory()).peakKiB);
    peaks.base = Math.max(peaks.base, (await baseline.memory()).peakKiB);
    const cpu = { base: cpuOf(bases), svc: cpuOf(svcs) };
    return report(scenario, resultOf(bases), resultOf(svcs), cpu);
  } finally {
    await service.stop();
    await baseline.stop();
  }
}

/** One side of a comparison: how it is warmed up (for so many seconds), and one measurement. */
interface Side<T> {
  warm: (seconds: number) => Promise<unknown>;
  measure: () => Promise<T>;
}

/** A server's side: warmed up by `drive`, measured by a CPU-timed round of `seconds`. */
const cpuSide = (process: ServerProcess, drive: Drive, seconds: number): Side<CpuRound> => ({
  warm: (s) => drive(process.url, s),
  measure: () => cpuRound(process, drive, seconds),
});

/**
 * Both sides warmed up (`warmup` seconds each, base first), then `rounds` measurements of each,
 * in alternating order (base first, then service first), so that drift in the machine's load
 * falls on both sides.
 */
async function alternate<T>(
  rounds: number,
  warmup: number,
  { warm: warmBase, measure: base }: Side<T>,
  { warm: warmSvc, measure: svc }: Side<T>,
): Promise<[T[], T[]]> {
  if (warmup > 0) {
    await warmBase(warmup);
    await warmSvc(warmup);
  }
  const bases: T[] = [];
  const svcs: T[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      bases.push(await base());
      svcs.push(await svc());
    } else {
      svcs.push(await svc());
      bases.push(await base());
    }
  }
  return [bases, svcs];
}

/** One row of the table: both sides' figures, the ratio and the verdict on the target. */
function printRow(name: string, base: WrkResult, svc: WrkResult, target: string): void {
  console.log(row([
    name,
    fmt(base.rps, 0),
    fmt(base.p50Ms),
    fmt(base.p99Ms),
    fmt(svc.rps, 0),
    fmt(svc.p50Ms),
    fmt(svc.p99Ms),
    String(svc.non2xx + svc.socketErrors),
    fmt(svc.rps / base.rps, 2),
    target,
  ], WIDTHS));
}

/** Prints a scenario's row and its CPU per request; answers whether it missed its target. */
function report(
  scenario: Scenario,
  base: WrkResult,
  svc: WrkResult,
  cpu: { base: number; svc: number },
): boolean {
  const ratio = svc.rps / base.rps;
  const problems: string[] = [];
  if (scenario.minRatio !== undefined && ratio < scenario.minRatio) {
    problems.push(`ratio < ${scenario.minRatio}`);
  }
  if (scenario.maxP99Ms !== undefined && svc.p99Ms >= scenario.maxP99Ms) {
    problems.push(`p99 >= ${scenario.maxP99Ms} ms`);
  }
  if (svc.non2xx > 0 || svc.socketErrors > 0) problems.push("non-2xx or socket errors");
  const target = scenario.minRatio === undefined
    ? (problems.length ? "MISSED" : "-")
    : (problems.length ? "MISSED" : "met");
  printRow(scenario.name, base, svc, target);
  if (problems.length) console.log(`  ${problems.join("; ")}`);
  console.log(
    `  CPU per request: base ${fmt(cpuUs(cpu.base, base))} µs, service ${
      fmt(cpuUs(cpu.svc, svc))
    } µs (user + system of the process, all threads)`,
  );
  return problems.length > 0;
}

/**
 * The REST read over the stack floor, both measured in one stretch of time: a service and a floor
 * run side by side and are driven in alternating rounds (`pairRounds` each), so a change in the
 * machine's speed falls on both (their rows above come from separate stretches, minutes apart).
 * Each pair of rounds gives a ratio of CPU per request; the target is judged on their median, since
 * one round slowed by the machine moves a figure pooled over all rounds by a third on a shared
 * 2-core machine. The pooled figure is printed beside it. Answers whether the target is met.
 */
async function runFloorPair(
  read: Scenario,
  databaseUrl: string,
  dataDir: string,
  settings: Settings,
): Promise<boolean> {
  const { seconds, warmup, pairRounds: rounds } = settings;
  const database = { databaseUrl, poolSize: settings.poolSize };
  const service = await startService({ ...database, dataDir, denoFlags: v8Flags });
  const floor = await startFloor({ ...database, without: floorWithout, denoFlags: v8Flags });
  try {
    const drive = driver(settings, requestsOf(read), HEADERS);
    const [floors, services] = await alternate(
      rounds,
      warmup,
      cpuSide(floor, drive, seconds),
      cpuSide(service, drive, seconds),
    );
    const perRequest = (runs: CpuRound[]) => cpuUs(cpuOf(runs), resultOf(runs));
    const svcUs = perRequest(services);
    const floorUs = perRequest(floors);
    const pooled = svcUs / floorUs;
    const p99Ms = resultOf(services).p99Ms;
    const pairs = services.map((r, i) =>
      cpuUs(r.cpu, r.result) / cpuUs(floors[i].cpu, floors[i].result)
    ).sort((a, b) => a - b);
    const half = Math.floor(pairs.length / 2);
    const ratio = pairs.length % 2 ? pairs[half] : (pairs[half - 1] + pairs[half]) / 2;
    const met = ratio <= FLOOR_TARGET.ratio && p99Ms < FLOOR_TARGET.p99Ms;
    console.log(
      `REST read over the stack floor, side by side in ${rounds} alternating rounds each: CPU per ` +
        `request ${fmt(ratio, 2)}x, the median of the rounds' ${
          pairs.map((r) => fmt(r, 2)).join(", ")
        } (over all rounds ${fmt(svcUs)} / ${fmt(floorUs)} µs = ${fmt(pooled, 2)}x), p99 ${
          fmt(p99Ms)
        } ms (target <= ${FLOOR_TARGET.ratio}x and p99 < ${FLOOR_TARGET.p99Ms} ms: ${
          met ? "met" : "MISSED"
        }; ${loadNote()})`,
    );
    return met;
  } finally {
    await service.stop();
    await floor.stop();
  }
}

/** The hello-world row: a bare Deno.serve against the connection layer alone. */
async function runHello(settings: Settings): Promise<void> {
  const { seconds, warmup, rounds } = settings;
  const bare = await startHello("deno");
  const layer = await startHello("layer");
  try {
    const drive = driver(settings, [{ method: "GET", path: "/" }], {});
    const wrkSide = (url: string) => ({
      warm: (s: number) => drive(url, s),
      measure: () => drive(url, seconds),
    });
    const [bases, layers] = await alternate(rounds, warmup, wrkSide(bare.url), wrkSide(layer.url));
    const base = combine(bases);
    const svc = combine(layers);
    printRow(HELLO, base, svc, "-");
    const extraUs = 1e6 / svc.rps - 1e6 / base.rps; // the server runs on one thread
    console.log(
      `  base: bare Deno.serve; svc: the connection layer alone; ` +
        `${fmt(extraUs, 1)} µs more per request (at ${settings.connections} connections)`,
    );
  } finally {
    await bare.stop();
    await layer.stop();
  }
}

async function main(): Promise<number> {
  await requireWrk();
  const { adminUrl, connections, threads, poolSize } = benchSettings();
  const settings: Settings = {
    connections,
    threads,
    poolSize,
    seconds: envNumber("BENCH_SECONDS", 5),
    warmup: envNumber("BENCH_WARMUP_SECONDS", 3),
    rounds: Math.max(1, envNumber("BENCH_ROUNDS", 3)),
    pairRounds: Math.max(1, envNumber("BENCH_PAIR_ROUNDS", 6)),
    cpuProf: Deno.env.get("BENCH_CPU_PROF"),
  };
  const only = Deno.env.get("BENCH_ONLY");
  // Names joined by `|` run those scenarios alone (the stored key's row beside the configured one).
  const exact = SCENARIOS.filter((s) => only?.split("|").includes(s.name));
  const scenarios = exact.length ? exact : SCENARIOS.filter((s) => !only || s.name.includes(only));

  console.log(`Seeding ${PROJECTS} projects x ${PROBES_PER_PROJECT} probes ...`);
  const database = await seededDatabase(adminUrl);
  const dataDir = await Deno.makeTempDir({ prefix: "probe-bench-" });
  let failures = 0;
  try {
    console.log(
      `wrk: ${connections} connections, ${threads} thread(s); ${settings.rounds} rounds of ` +
        `${settings.seconds} s per side and scenario, after ${settings.warmup} s warm-up, on ` +
        `fresh processes per scenario; pool ${poolSize}; V8 flags of the service and the floor: ` +
        benchV8Flags,
    );
    console.log(await speedNote());
    console.log(
      row(
        [
          "scenario",
          "base r/s",
          "p50",
          "p99",
          "svc r/s",
          "p50",
          "p99",
          "non2xx",
          "ratio",
          "target",
        ],
        WIDTHS,
      ),
    );
    for (const scenario of scenarios) {
      if (await runScenario(scenario, database.url, dataDir, settings)) failures++;
    }
    const read = scenarios.find((s) => s.name === READ);
    if (read && scenarios.some((s) => s.name === FLOOR)) {
      if (!(await runFloorPair(read, database.url, dataDir, settings))) failures++;
    }
    if (!only || HELLO.includes(only)) await runHello(settings);
    if (scenarios.length) {
      console.log(
        `Peak RSS: service ${mib(peaks.svc)}, baseline ${mib(peaks.base)}. ` +
          `Load after the run: ${loadNote()}`,
      );
    }
    console.log(
      "Latencies in ms; targets: REST GET project ratio >= 0.6 and p99 < 20 ms, " +
        "tRPC read ratio >= 0.7, no non-2xx.",
    );
  } finally {
    await database.drop();
    await Deno.remove(dataDir, { recursive: true });
  }
  if (settings.cpuProf) console.log(`CPU profile written to ${settings.cpuProf}`);
  return failures === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
