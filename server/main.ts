/**
 * Composition root: configuration, then the port (bound first: a port in use stops start-up
 * before anything else is done), then the database and its migrations, then the I'm alive
 * reporter and the probe runner (unless RUNNER=off), then the HTTP server serves. SIGINT and
 * SIGTERM stop new connections and the runner's claims, let requests and probe runs in flight
 * finish, stop the reporter, close the database.
 */
import { firstStartNote, resolveApiKeys } from "./domain/access/api_key.ts";
import { type App, createApp } from "./app.ts";
import { databaseTarget } from "./storage/database.ts";
import { type Config, ConfigError, parseConfig, publicUrlOf } from "./base/config.ts";
import { surviveDatabaseClientFaults } from "./storage/client_faults.ts";
import { type DatabaseHandle, openDatabase } from "./storage/database.ts";
import { DataDirInUseError, lockDataDir } from "./storage/data_dir_lock.ts";
import { createLogger, errorFields, type Logger } from "./base/log.ts";
import { systemClock } from "./base/clock.ts";
import { createHeapTrimLoop } from "./base/heap_trim.ts";
import { executorFromConfig, runnerFromConfig } from "./runner/configure.ts";
import { createNetworkPolicy } from "./base/outbound/network_policy.ts";
import {
  ASSUMED_FREE_FILE_DESCRIPTORS,
  countFreeFileDescriptors,
  type HttpServer,
  MAX_SIZED_CONNECTIONS,
  PortInUseError,
  RESERVED_FILE_DESCRIPTORS,
  serve,
  type ServeHandler,
  sizeMaxConnections,
} from "./edge/serve.ts";
import { reportRunnerFigures } from "./runner/report_figures.ts";
import { warnAutovacuumOff } from "./storage/statistics.ts";

/**
 * Files the embedded database may hold open: PGlite keeps its data files open, about 100 after
 * the first requests and up to one per relation file (some 350).
 */
const EMBEDDED_DATABASE_FILES = 512;

/** The configuration, or null when it is wrong (the reason is printed). */
function readConfig(): Config | null {
  try {
    return parseConfig(Deno.env.toObject());
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return null;
    }
    throw error;
  }
}

/** The connection cap: `MAX_CONNECTIONS`, or sized from the files the process may still open. */
function maxConnectionsOf(config: Config): number {
  const reserved = RESERVED_FILE_DESCRIPTORS +
    (config.databaseUrl ? config.databasePoolSize : EMBEDDED_DATABASE_FILES) +
    (config.runner ? config.probeConcurrency : 0);
  return config.connections.maxConnections ?? sizeMaxConnections(
    countFreeFileDescriptors(MAX_SIZED_CONNECTIONS + reserved) ?? ASSUMED_FREE_FILE_DESCRIPTORS,
    reserved,
  );
}

/**
 * Binds the port, before anything else: requests that arrive before `serveWith` is called wait
 * for the handler it is given. Null when the port is in use (printed).
 */
async function bindPort(
  config: Config,
  { log, signal, maxConnections }: { log: Logger; signal: AbortSignal; maxConnections: number },
): Promise<{ server: HttpServer; serveWith: (handler: ServeHandler) => void } | null> {
  const serving: { handler?: ServeHandler } = {};
  const ready = Promise.withResolvers<ServeHandler>();
  try {
    const server = await serve({
      hostname: config.host,
      port: config.port,
      handler: (request, client) =>
        serving.handler?.(request, client) ?? ready.promise.then((h) => h(request, client)),
      limits: { ...config.connections, maxConnections },
      log,
      signal,
    });
    const serveWith = (handler: ServeHandler) => {
      serving.handler = handler;
      ready.resolve(handler);
    };
    return { server, serveWith };
  } catch (error) {
    if (error instanceof PortInUseError) {
      console.error(`port ${config.port} is already in use (PORT)`);
      return null;
    }
    throw error;
  }
}

/**
 * The embedded database is one process's: a second server on this DATA_DIR stops here (null,
 * printed). Held until the database has closed (the system releases it if the process dies);
 * none with PostgreSQL.
 */
async function lockEmbeddedDataDir(
  config: Config,
): Promise<{ lock?: Awaited<ReturnType<typeof lockDataDir>> } | null> {
  try {
    return { lock: config.databaseUrl ? undefined : await lockDataDir(config.dataDir) };
  } catch (error) {
    if (error instanceof DataDirInUseError) {
      console.error(error.message);
      return null;
    }
    throw error;
  }
}

/** The service's app over `database`, from the configuration. */
function appFromConfig(
  config: Config,
  { database, apiKeys, log, server }: {
    database: DatabaseHandle;
    apiKeys: string[];
    log: Logger;
    server: HttpServer;
  },
): Promise<App> {
  const policy = createNetworkPolicy(config.probeAllowNetworks);
  return createApp({
    database,
    apiKeys,
    log,
    config,
    // Notification targets obey the probes' network policy; their links lead to PUBLIC_URL, or
    // to the address bound.
    notify: { policy, publicUrl: publicUrlOf(config, server.addr) },
    // Run-now uses the runner's executor, whether this process runs the runner or not.
    runProbe: executorFromConfig(config),
    iamAlive: {
      runnerFigures: reportRunnerFigures(database.db),
      // The webhook obeys the probes' outbound network policy, as notification targets do.
      policy,
    },
    metrics: { processMetrics: true, connections: server.stats },
  });
}

/**
 * The first line, before anything slow: creating the embedded database (PGlite's initdb, then
 * the migrations) takes ~4 s on an idle machine and 30 s under load, and a start that says
 * nothing for that long looks hung.
 */
async function announceStart(config: Config, log: Logger): Promise<void> {
  if (config.databaseUrl) return log.info("connecting to PostgreSQL (DATABASE_URL)");
  const path = `${config.dataDir}/pgdata`;
  const exists = await Deno.stat(path).then(() => true, () => false);
  log.info(
    exists
      ? `starting the embedded database in ${path}`
      : `creating the embedded database in ${path}: the first start takes several seconds`,
  );
}

async function main(): Promise<number> {
  const config = readConfig();
  if (!config) return 1;
  const log = createLogger(config.logLevel);
  // A fault inside the PostgreSQL client is logged, and the process goes on.
  const clientFaults = surviveDatabaseClientFaults(log);

  // The port first. Requests that arrive while the database opens wait for it.
  const shutdown = new AbortController();
  const maxConnections = maxConnectionsOf(config);
  const bound = await bindPort(config, { log, signal: shutdown.signal, maxConnections });
  if (!bound) return 1;
  const { server, serveWith } = bound;

  await Deno.mkdir(config.dataDir, { recursive: true });
  const dataDir = await lockEmbeddedDataDir(config);
  if (!dataDir) return 1;
  // Binding and locking take milliseconds: a port in use or a DATA_DIR in use stops start-up with
  // its one line, and no other.
  await announceStart(config, log);
  const { keys: apiKeys, generated } = await resolveApiKeys({
    configured: config.apiKeys,
    dataDir: config.dataDir,
    log,
  });
  const target = databaseTarget(config);
  // Each query of a request waits this long for the database at most (docs/operations.md).
  const database = await openDatabase(target);
  const app = await appFromConfig(config, { database, apiKeys, log, server });
  warnAutovacuumOff(app.statistics, log);
  await app.reporter.start();
  app.deliverer.start();
  app.heartbeats.watch.start();
  const runner = config.runner
    ? runnerFromConfig({
      config,
      db: database.db,
      log,
      overrides: { observer: app.metrics.runner.observer },
    })
    : null;
  if (runner) app.metrics.runner.watch(runner);
  runner?.start();
  const heapTrim = createHeapTrimLoop({ clock: systemClock, log });
  heapTrim?.start();

  // Listen for signals before announcing the port: a SIGTERM right after "listening" must
  // still shut down in order.
  let runnerStopped: Promise<void> | undefined;
  const stop = () => {
    shutdown.abort();
    runnerStopped ??= runner?.stop();
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  serveWith(app.handler);
  const { hostname, port } = server.addr;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  log.info("listening", {
    url: `http://${host}:${port}`,
    database: target.kind,
    max_connections: maxConnections,
  });
  // The generated key's note comes now, with the port bound (PORT=0 picks one) and answering.
  if (generated) {
    console.log(
      firstStartNote({
        ...generated,
        url: publicUrlOf({}, server.addr),
        dataDir: config.dataDir,
        networksOpened: config.probeAllowNetworks.length > 0,
      }),
    );
  }

  await server.finished;
  Deno.removeSignalListener("SIGINT", stop);
  Deno.removeSignalListener("SIGTERM", stop);
  await (runnerStopped ?? runner?.stop());
  await heapTrim?.stop();
  await app.close(); // the reporter stops before the database closes
  await dataDir.lock?.release();
  clientFaults.remove();
  log.info("stopped");
  return 0;
}

/** Runs the server and exits with its status: what this module, or its bundle, runs as a program. */
export async function run(): Promise<never> {
  try {
    Deno.exit(await main());
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", msg: "start-up failed", ...errorFields(error) }),
    );
    Deno.exit(1);
  }
}

if (import.meta.main) await run();
