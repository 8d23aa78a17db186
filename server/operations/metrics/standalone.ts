/**
 * The standalone runner's `/metrics` (`deno task runner` with `METRICS_PORT`): its runner, its
 * database pools and its process, on a port of its own, behind the same keys as the server's
 * (`X-Service-Api-Key` or `Authorization: Bearer`, write or read-only). It serves nothing else
 * but `/healthz`. Its refusals are the edge's error answers (`server/edge/answers.ts`), with the
 * same headers.
 *
 * @module
 */
import type { Registry } from "prom-client";
import type { Config } from "../../base/config.ts";
import type { Db } from "../../storage/database.ts";
import type { PoolStats } from "../../storage/pool_stats.ts";
import { apiError, type ErrorCode } from "../../procedures/errors.ts";
import type { Scope } from "../../domain/access/api_key.ts";
import { presentedKey } from "../../domain/access/presented_key.ts";
import { errorAnswer } from "../../edge/answers.ts";
import { createRateLimiter } from "../../edge/rate_limit.ts";
import { type HttpServer, serve } from "../../edge/serve.ts";
import type { Logger } from "../../base/log.ts";
import { poolMetrics } from "./database.ts";
import { answerMetrics, METRICS_PATH } from "./endpoint.ts";
import { createRegistry, scrapeReads } from "./registry.ts";
import { type RunnerMetrics, runnerMetrics } from "./runner.ts";

/** The runner process's registry: runner, pools, process. */
export function createRunnerProcessMetrics(
  { db, log, poolStats, processMetrics = true }: {
    db: Db;
    log: Logger;
    poolStats?: () => PoolStats[];
    processMetrics?: boolean;
  },
): { registry: Registry; runner: RunnerMetrics } {
  const registry = createRegistry({ processMetrics });
  if (poolStats) poolMetrics(registry, poolStats);
  const runner = runnerMetrics(registry, { db, reads: scrapeReads(registry, log) });
  return { registry, runner };
}

/**
 * The keys the runner's `/metrics` accepts, as the server resolves them: `SERVICE_API_KEY`, or
 * else the key the server keeps in `<DATA_DIR>/api-key`; and `SERVICE_API_KEYS_READONLY`. None
 * at all is a configuration error (the runner never makes a key of its own).
 */
export async function runnerMetricsKeys(
  config: Pick<Config, "apiKeys" | "readOnlyApiKeys" | "dataDir">,
): Promise<{ keys: string[]; readOnlyKeys: string[] }> {
  let keys = config.apiKeys ?? [];
  if (keys.length === 0) {
    try {
      const stored = (await Deno.readTextFile(`${config.dataDir}/api-key`)).trim();
      if (stored) keys = [stored];
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return { keys, readOnlyKeys: config.readOnlyApiKeys };
}

/** Serves `/metrics` (and `/healthz`) on `hostname:port` until `signal` aborts. */
export function serveRunnerMetrics(
  { hostname, port, registry, checkKey, authFailuresPerSecond, log, signal }: {
    hostname: string;
    port: number;
    registry: Registry;
    checkKey: (presented: string | null) => Scope | null;
    /** Failed key checks per second per client address (`AUTH_FAILURES_PER_SECOND`). */
    authFailuresPerSecond: number;
    log: Logger;
    signal: AbortSignal;
  },
): Promise<HttpServer> {
  const failures = createRateLimiter({ perSecond: authFailuresPerSecond, maxKeys: 10_000 });
  // The edge's error answer (`answers.ts`): the contract's body, `nosniff` and `no-store`.
  const error = (code: ErrorCode, headers: Record<string, string> = {}) =>
    errorAnswer(apiError(code), headers);
  return serve({
    hostname,
    port,
    log,
    signal,
    handler: (request, client) => {
      const path = new URL(request.url).pathname;
      if (path === "/healthz" && request.method === "GET") {
        return Response.json({ status: "ok" });
      }
      if (path !== METRICS_PATH) return error("not_found");
      if (!checkKey(presentedKey(request.headers))) {
        const admission = failures?.take(client.address);
        if (admission && !admission.ok) {
          return error("rate_limited", { "retry-after": String(admission.retryAfterSeconds) });
        }
        return error("unauthorized");
      }
      return answerMetrics(request, registry);
    },
  });
}
