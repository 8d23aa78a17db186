/**
 * The server's metrics, built once per app (`createApp`): HTTP, database pools, the runner, the
 * I'm alive deliveries, the notification queue, per-probe and per-location series and, in a long-lived process,
 * the process's own. See docs/metrics.md.
 *
 * @module
 */
import { Counter, type Registry } from "prom-client";
import type { Db } from "../../storage/database.ts";
import type { PoolStats } from "../../storage/pool_stats.ts";
import type { ThreadMemory } from "../../storage/pglite_thread.ts";
import type { ConnectionStats } from "../../edge/serve.ts";
import type { Logger } from "../../base/log.ts";
import { databaseMetrics, embeddedThreadMetrics, poolMetrics } from "./database.ts";
import type { HttpMetrics } from "../../edge/edge_types.ts";
import { httpMetrics } from "./http.ts";
import { locationMetrics } from "./locations.ts";
import { heartbeatMetrics } from "./heartbeats.ts";
import { createRegistry, scrapeReads } from "./registry.ts";
import { type RunnerMetrics, runnerMetrics } from "./runner.ts";

export interface ServiceMetrics {
  registry: Registry;
  http: HttpMetrics;
  runner: RunnerMetrics;
  /** Counts an I'm alive delivery (`ReporterOptions.onDelivery`). */
  iamAliveDelivery(channel: string, outcome: string): void;
}

export interface ServiceMetricsOptions {
  db: Db;
  log: Logger;
  /** The database handle's pool figures (`DatabaseHandle.poolStats`). */
  poolStats?: () => PoolStats[];
  /** The embedded database's thread's memory (`DatabaseHandle.threadMemory`). */
  threadMemory?: () => Promise<ThreadMemory>;
  /** `METRICS_PER_PROBE`: the per-probe series (about three a probe); on by default. */
  perProbe?: boolean;
  /** The process's default metrics (see `createRegistry`); off by default. */
  processMetrics?: boolean;
  /** The connection layer's figures (`HttpServer.stats`), when the app is served by `serve()`. */
  connections?: () => ConnectionStats;
  /** The built-in location's name (`RUNNER_LOCATION`), for the per-location series. */
  localLocation?: string;
}

export function createServiceMetrics(
  {
    db,
    log,
    poolStats,
    threadMemory,
    perProbe = true,
    processMetrics = false,
    connections,
    localLocation,
  }: ServiceMetricsOptions,
): ServiceMetrics {
  const registry = createRegistry({ processMetrics });
  const reads = scrapeReads(registry, log);
  const http = httpMetrics(registry, { connections });
  if (poolStats) poolMetrics(registry, poolStats);
  if (threadMemory) embeddedThreadMetrics(registry, reads("embedded_thread", threadMemory));
  const runner = runnerMetrics(registry, { db, reads });
  const deliveries = new Counter({
    name: "iam_alive_deliveries_total",
    help: "I'm alive report deliveries, by channel and outcome",
    labelNames: ["channel", "outcome"],
    registers: [registry],
  });
  databaseMetrics(registry, { db, reads, perProbe });
  locationMetrics(registry, { db, reads, localLocation });
  if (perProbe) heartbeatMetrics(registry, { db, reads });
  return {
    registry,
    http,
    runner,
    iamAliveDelivery: (channel, outcome) => deliveries.inc({ channel, outcome }),
  };
}
