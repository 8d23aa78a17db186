import type { Config } from "../base/config.ts";
import type { Db } from "../storage/database.ts";
import type { Logger } from "../base/log.ts";
import { createNetworkPolicy } from "../base/outbound/network_policy.ts";
import { executeProbe } from "./execute.ts";
import type { Executor } from "./run_now.ts";
import { createRunner, type Runner, type RunnerOptions } from "./runner.ts";
import { createWorkerExecutor } from "./worker_executor.ts";
import { probeUserAgent } from "./user_agent.ts";

/**
 * How the configuration runs one probe: the network policy (`PROBE_ALLOW_NETWORKS`), the
 * timeout (`PROBE_TIMEOUT_MS`) and the authorities `tls://` probes trust (`PROBE_CA_FILE`). The
 * runner and run-now (`POST …/run`) use the same.
 */
export function executorFromConfig(
  config: Pick<Config, "probeAllowNetworks" | "probeTimeoutMs" | "runnerLocation" | "probeCa">,
): Executor {
  const policy = createNetworkPolicy(config.probeAllowNetworks);
  const userAgent = probeUserAgent(config.runnerLocation);
  const { probeTimeoutMs: timeoutMs, probeCa: ca } = config;
  return (target, hooks) => executeProbe(target, { ...hooks, policy, timeoutMs, userAgent, ca });
}

/**
 * A runner with the settings the configuration names, over the given database. Its probes run
 * in a worker thread (`worker_executor.ts`), ended when the runner stops, so that what targets
 * answer is read and judged off the thread that answers HTTP.
 */
export function runnerFromConfig(
  { config, db, log, overrides }: {
    config: Config;
    db: Db;
    log: Logger;
    overrides?: Partial<RunnerOptions>;
  },
): Runner {
  const worker = overrides?.execute ? null : createWorkerExecutor({
    allowNetworks: config.probeAllowNetworks,
    timeoutMs: config.probeTimeoutMs,
    userAgent: probeUserAgent(config.runnerLocation),
    ca: config.probeCa,
  });
  const runner = createRunner({
    db,
    log,
    intervalMs: config.probeIntervalSeconds * 1000,
    timeoutMs: config.probeTimeoutMs,
    concurrency: config.probeConcurrency,
    hostConcurrency: config.probeHostConcurrency,
    retentionDays: config.resultsRetentionDays,
    auditRetentionDays: config.auditRetentionDays,
    localLocation: config.runnerLocation,
    policy: createNetworkPolicy(config.probeAllowNetworks),
    ca: config.probeCa,
    ...(worker && { execute: worker.execute }),
    ...overrides,
  });
  if (!worker) return runner;
  return {
    ...runner,
    threadHeap: worker.heap,
    async stop() {
      await runner.stop();
      worker.close();
    },
  };
}
