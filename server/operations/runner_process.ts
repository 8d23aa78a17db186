/**
 * `deno task runner`: a probe runner with no HTTP API, for scaling runners apart from the API.
 * It needs PostgreSQL (DATABASE_URL): runners share the schedule there. With METRICS_PORT it
 * serves its own `/metrics` there (docs/metrics.md). SIGINT and SIGTERM give back unstarted
 * claims, let runs in flight finish and record them, then close the database.
 */
import { ConfigError, parseConfig } from "../base/config.ts";
import { surviveDatabaseClientFaults } from "../storage/client_faults.ts";
import { openDatabase } from "../storage/database.ts";
import { keepStatisticsIfNeeded, warnAutovacuumOff } from "../storage/statistics.ts";
import { migrateToLatest } from "../storage/migrator.ts";
import { createKeyCheck } from "../domain/access/api_key.ts";
import { PortInUseError } from "../base/port_in_use.ts";
import { createLogger, errorFields } from "../base/log.ts";
import { systemClock } from "../base/clock.ts";
import { createHeapTrimLoop } from "../base/heap_trim.ts";
import {
  createRunnerProcessMetrics,
  runnerMetricsKeys,
  serveRunnerMetrics,
} from "./metrics/standalone.ts";
import { runnerFromConfig } from "../runner/configure.ts";
import type { RunnerOptions } from "../runner/runner.ts";

/**
 * Runs a runner process until SIGINT or SIGTERM; returns the exit code. `overrides` is for the
 * tests' runner processes, which use intervals shorter than configuration allows.
 */
export async function runnerProcess(
  env: Record<string, string | undefined>,
  overrides: Partial<RunnerOptions> = {},
): Promise<number> {
  let config;
  try {
    config = parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
  if (!config.databaseUrl) {
    console.error(
      "DATABASE_URL must name a PostgreSQL database: the embedded database has one runner, " +
        "inside the server",
    );
    return 1;
  }
  const log = createLogger(config.logLevel);
  const metricsKeys = config.metricsPort === undefined ? null : await runnerMetricsKeys(config);
  if (metricsKeys && metricsKeys.keys.length + metricsKeys.readOnlyKeys.length === 0) {
    console.error(
      "METRICS_PORT needs a key: set SERVICE_API_KEY or SERVICE_API_KEYS_READONLY, or point " +
        "DATA_DIR at the server's, where its api-key file is",
    );
    return 1;
  }
  // A fault inside the PostgreSQL client is logged, and the process goes on: one bad connection
  // must not stop every probe.
  const clientFaults = surviveDatabaseClientFaults(log);
  const handle = await openDatabase({ kind: "postgres", url: config.databaseUrl, poolSize: 4 });
  const serving = new AbortController();
  let metricsServer;
  try {
    await migrateToLatest(handle.db);
    const metrics = createRunnerProcessMetrics({
      db: handle.db,
      log,
      poolStats: handle.poolStats,
    });
    if (metricsKeys) {
      try {
        metricsServer = await serveRunnerMetrics({
          hostname: config.host,
          port: config.metricsPort!,
          registry: metrics.registry,
          checkKey: createKeyCheck(metricsKeys.keys, metricsKeys.readOnlyKeys),
          authFailuresPerSecond: config.authFailuresPerSecond,
          log,
          signal: serving.signal,
        });
      } catch (error) {
        if (error instanceof PortInUseError) {
          console.error(`port ${config.metricsPort} is already in use (METRICS_PORT)`);
          return 1;
        }
        throw error;
      }
      const { hostname, port } = metricsServer.addr;
      const host = hostname.includes(":") ? `[${hostname}]` : hostname;
      log.info("metrics listening", { url: `http://${host}:${port}/metrics` });
    }
    const runner = runnerFromConfig({
      config,
      db: handle.db,
      log,
      overrides: { observer: metrics.runner.observer, ...overrides },
    });
    metrics.runner.watch(runner);
    // A server with autovacuum off gets its planner's statistics from the service's processes.
    const statistics = await keepStatisticsIfNeeded({ handle, log });
    warnAutovacuumOff(statistics, log);
    const stopped = Promise.withResolvers<void>();
    const stop = () => stopped.resolve();
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
    runner.start();
    const heapTrim = createHeapTrimLoop({ clock: systemClock, log });
    heapTrim?.start();
    await stopped.promise;
    await heapTrim?.stop();
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
    await runner.stop();
    await statistics?.stop();
  } finally {
    serving.abort();
    await metricsServer?.finished;
    await handle.close();
    clientFaults.remove();
  }
  return 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await runnerProcess(Deno.env.toObject()));
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", msg: "runner failed", ...errorFields(error) }),
    );
    Deno.exit(1);
  }
}
