import type { Config } from "../config.ts";
import type { Db } from "../db/database.ts";
import type { Logger } from "../log.ts";
import { createNetworkPolicy } from "../outbound/network_policy.ts";
import { createRunner, type Runner, type RunnerOptions } from "./runner.ts";

/** A runner with the settings the configuration names, over the given database. */
export function runnerFromConfig(
  { config, db, log, overrides }: {
    config: Config;
    db: Db;
    log: Logger;
    overrides?: Partial<RunnerOptions>;
  },
): Runner {
  return createRunner({
    db,
    log,
    intervalMs: config.probeIntervalSeconds * 1000,
    timeoutMs: config.probeTimeoutMs,
    concurrency: config.probeConcurrency,
    retentionDays: config.resultsRetentionDays,
    policy: createNetworkPolicy(config.probeAllowNetworks),
    ...overrides,
  });
}
