import type { Config } from "../config.ts";
import type { Db } from "../db/database.ts";
import type { Logger } from "../log.ts";
import { createNetworkPolicy } from "./network_policy.ts";
import { createRunner, type Runner } from "./runner.ts";

/** A runner with the settings the configuration names, over the given database. */
export function runnerFromConfig(
  { config, db, log }: { config: Config; db: Db; log: Logger },
): Runner {
  return createRunner({
    db,
    log,
    intervalMs: config.probeIntervalSeconds * 1000,
    timeoutMs: config.probeTimeoutMs,
    concurrency: config.probeConcurrency,
    retentionDays: config.resultsRetentionDays,
    policy: createNetworkPolicy(config.probeAllowNetworks),
  });
}
