/** What the benchmarks share: a seeded database of their own and the processes under test. */
import { openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { createPostgresDatabase } from "../server/testing/app.ts";
import { SERVER_ENTRY, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { seed } from "./seed.ts";
import { hasWrk, WRK_MISSING } from "./wrk.ts";

export const BENCH_KEY = "bench-key-0123456789";
export const PROJECTS = 1000;
export const PROBES_PER_PROJECT = 10;

export interface BenchSettings {
  adminUrl: string;
  connections: number;
  threads: number;
  poolSize: number;
}

/** Reads a positive number from the environment, or the default. */
export function envNumber(name: string, fallback: number): number {
  const raw = Deno.env.get(name);
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number, got ${raw}`);
  return value;
}

export function benchSettings(): BenchSettings {
  return {
    adminUrl: Deno.env.get("BENCH_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/postgres",
    connections: envNumber("BENCH_CONNECTIONS", 64),
    threads: envNumber("BENCH_THREADS", 1),
    poolSize: envNumber("BENCH_POOL_SIZE", 10),
  };
}

/** Stops with the install hint when wrk is missing. */
export async function requireWrk(): Promise<void> {
  if (!(await hasWrk())) {
    console.error(WRK_MISSING);
    Deno.exit(2);
  }
}

/** A database of the benchmark's own, migrated and seeded; dropped by `drop`. */
export async function seededDatabase(
  adminUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const database = await createPostgresDatabase(adminUrl, "probe_bench");
  try {
    const handle = await openDatabase({ kind: "postgres", url: database.url });
    try {
      await migrateToLatest(handle.db);
      await seed(handle.db, { projects: PROJECTS, probes: PROBES_PER_PROJECT });
    } finally {
      await handle.close();
    }
    return database;
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** The product in production mode over the given database, logging at its default level. */
export async function startService(
  { databaseUrl, poolSize, dataDir, denoFlags, extraEnv, onLine }: {
    databaseUrl: string;
    poolSize: number;
    dataDir: string;
    denoFlags?: string[];
    extraEnv?: Record<string, string>;
    onLine?: (line: string) => void;
  },
): Promise<ServerProcess> {
  return await startServerProcess({
    entry: await startEntry(),
    env: {
      NODE_ENV: "production",
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_SIZE: String(poolSize),
      SERVICE_API_KEY: BENCH_KEY,
      DATA_DIR: dataDir,
      // One key at thousands of requests a second: limited so high that the bucket runs but never refuses.
      RATE_LIMIT_PER_SECOND: "100000000",
      // The probe runner would run the seeded probes (and reach for their hosts): this measures
      // the HTTP path alone.
      RUNNER: "off",
      ...extraEnv,
    },
    denoFlags,
    onLine,
  });
}

/** A comparison server of this folder (`file`) over the given database, taking the bench's key. */
async function startBeside(
  file: string,
  { databaseUrl, poolSize }: { databaseUrl: string; poolSize: number },
  env: Record<string, string> = {},
  denoFlags: string[] = [],
): Promise<ServerProcess> {
  return await startServerProcess({
    entry: new URL(file, import.meta.url).pathname,
    denoFlags,
    env: {
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_SIZE: String(poolSize),
      SERVICE_API_KEY: BENCH_KEY,
      ...env,
    },
  });
}

/** The bare baseline over the given database. */
export async function startBaseline(
  database: { databaseUrl: string; poolSize: number },
): Promise<ServerProcess> {
  return await startBeside("./baseline.ts", database);
}

/** A hello-world server: a bare `Deno.serve`, or the service's connection layer. */
export async function startHello(kind: "deno" | "layer"): Promise<ServerProcess> {
  return await startServerProcess({
    entry: new URL("./baseline.ts", import.meta.url).pathname,
    env: { HELLO: kind },
  });
}

/**
 * The stack's floor (`floor.ts`): the project read through the service's libraries alone, less
 * those named in `without`.
 */
export async function startFloor(
  { without, denoFlags, ...database }: {
    databaseUrl: string;
    poolSize: number;
    without: string;
    denoFlags?: string[];
  },
): Promise<ServerProcess> {
  return await startBeside("./floor.ts", database, { WITHOUT: without }, denoFlags);
}

/**
 * The server (`entry`: `server/main.ts` or another checkout's) as a subprocess watching local
 * targets every 10 s, with its output captured: on the embedded database in a new `DATA_DIR`, or
 * on a PostgreSQL database of its own (`BENCH_DATABASE_URL`'s server). `close` stops it and
 * removes what it made.
 */
export async function startOn(
  database: string,
  { entry = SERVER_ENTRY, key }: { entry?: string; key: string },
): Promise<{ server: ServerProcess; close(): Promise<void> }> {
  const dataDir = await Deno.makeTempDir({ prefix: "bench-" });
  const pg = database === "postgres"
    ? await createPostgresDatabase(benchSettings().adminUrl, "bench")
    : null;
  const server = await startServerProcess({
    entry,
    // The entry's own checkout, for its deno.json and lock.
    cwd: new URL("../..", `file://${entry}`).pathname,
    env: {
      SERVICE_API_KEY: key,
      DATA_DIR: dataDir,
      PROBE_INTERVAL_SECONDS: "10",
      PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
      LOG_LEVEL: "warn",
      ...(pg && { DATABASE_URL: pg.url }),
    },
    output: "capture",
    readyTimeoutMs: 120_000,
  });
  return {
    server,
    async close() {
      await server.stop();
      await pg?.drop();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

/** The machine's load right now, to print beside the figures. */
export function loadNote(): string {
  const load = Deno.loadavg().map((n) => n.toFixed(2)).join(" ");
  return `${navigator.hardwareConcurrency} CPUs, load average ${load}`;
}

/**
 * How fast this machine runs JavaScript now: the least of three timings (ms) of a fixed piece of
 * work made of what a request's JavaScript does most (small objects, promise reactions, JSON).
 * The same machine kind has measured 2-4 times apart on different days while native code
 * (`Deno.serve`) moved far less, so figures of two sessions compare only beside this line.
 */
export async function jsSpeedMs(): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    let sink = 0;
    let chain: Promise<number> = Promise.resolve(0);
    for (let i = 0; i < 200_000; i++) {
      const row = { project: `p${i}`, label: null, status: "enabled", n: i };
      sink += JSON.stringify(row).length;
      chain = chain.then((n) => n + row.n);
    }
    sink += await chain;
    best = Math.min(best, performance.now() - started);
    if (sink < 0) console.log(sink); // keeps the work from being optimised away
  }
  return best;
}

/** The calibration line every benchmark prints first (`jsSpeedMs`). */
export async function speedNote(): Promise<string> {
  return `JS calibration: ${(await jsSpeedMs()).toFixed(0)} ms ` +
    "(200,000 objects, JSON texts and promise reactions; lower is faster); " + loadNote();
}

export const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;

/**
 * The V8 flags and the variables (`NAME=value` before `deno`) of `deno task start` in the
 * checkout at `dir` (this one by default): benchmarks run the server as that task runs it.
 */
export function startTaskOf(
  dir = new URL("..", import.meta.url).pathname,
): { v8Flags?: string; env: Record<string, string>; entry: string; bundled: boolean } {
  const config = JSON.parse(Deno.readTextFileSync(`${dir.replace(/\/$/, "")}/deno.json`));
  const start = config.tasks?.start;
  const command: string = typeof start === "string" ? start : start?.command ?? "";
  const env = Object.fromEntries(
    [...command.slice(0, command.indexOf("deno ")).matchAll(/(\w+)=(\S+)/g)].map((m) => [
      m[1],
      m[2],
    ]),
  );
  return {
    v8Flags: /--v8-flags=(\S+)/.exec(command)?.[1],
    env,
    // The script it runs, its last word: the bundle, which its `bundle` dependency builds.
    entry: command.trim().split(/\s+/).at(-1) ?? "server/main.ts",
    bundled: (start?.dependencies ?? []).includes("bundle"),
  };
}

const built = new Map<string, Promise<string>>();

/**
 * The script `deno task start` runs in the checkout at `dir` (this one by default), as a path:
 * its bundle, built first (once a process) where the task builds one.
 */
export function startEntry(dir = new URL("..", import.meta.url).pathname): Promise<string> {
  const root = dir.replace(/\/$/, "");
  let entry = built.get(root);
  if (!entry) {
    entry = (async () => {
      const task = startTaskOf(root);
      if (task.bundled) {
        const { success } = await new Deno.Command(Deno.execPath(), {
          args: ["task", "--quiet", "bundle"],
          cwd: root,
          stdout: "null",
        }).output();
        if (!success) throw new Error(`deno task bundle failed in ${root}`);
      }
      return `${root}/${task.entry}`;
    })();
    built.set(root, entry);
  }
  return entry;
}
