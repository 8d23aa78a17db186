/**
 * The runner's side of the I'm alive reports: its figures in the report's shape, and the
 * network policy as the webhook channel's outbound check.
 *
 * @module
 */
import type { IamAliveRunnerFigures } from "@probe/shared";
import type { Db } from "../db/database.ts";
import { runnerFigures } from "../runner/figures.ts";
import { checkOutboundUrl, type NetworkPolicy, type Resolver } from "../outbound/network_policy.ts";

/** Runs, failures and slip since a time, for a report (`since` within the results' retention). */
export function reportRunnerFigures(
  db: Db,
): (since: Date) => Promise<IamAliveRunnerFigures> {
  return async (since) => {
    const f = await runnerFigures({ db, since });
    return {
      runs: f.runs,
      failures: f.failures,
      up: f.outcomes.up,
      degraded: f.outcomes.degraded,
      down: f.outcomes.down,
      blocked: f.outcomes.blocked,
      ...(f.slip && {
        slip_p50_ms: f.slip.p50,
        slip_p99_ms: f.slip.p99,
        slip_max_ms: f.slip.max,
      }),
      probes_scheduled: f.probes.scheduled,
      probes_overdue: f.probes.overdue,
    };
  };
}

/**
 * The probes' network policy as an outbound check for other senders (the webhook channel).
 * A name that does not resolve is refused too: there is no checked address to send to.
 */
export function outboundCheck(
  policy: NetworkPolicy,
  resolve?: Resolver,
): (url: URL) => Promise<{ allowed: boolean; reason?: string }> {
  return async (url) => {
    const check = await checkOutboundUrl(url.href, { policy, resolve });
    return check.ok ? { allowed: true } : { allowed: false, reason: check.reason };
  };
}
