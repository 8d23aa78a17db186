/**
 * Test support for callers of the results API (the typed client, the CLI): real runs of the
 * probes in a test database, made by a real runner that may reach loopback only, stepped by hand
 * instead of on its timers.
 *
 * @module
 */
import type { Db } from "../storage/database.ts";
import { createLogger } from "../base/log.ts";
import { LOOPBACK_ONLY } from "./app.ts";
import {
  createRunner,
  type Runner,
  type RunnerCounters,
  type RunnerOptions,
} from "../runner/runner.ts";

/**
 * Runs every probe of the database that is due now, once each: new probes are due at once.
 * Resolves when every run is recorded. Probes must point at loopback (for example a
 * `startTarget()`), the only network the runner is allowed.
 */
export async function runDueProbesOnce(
  db: Db,
  { observer, onRunner }: {
    /** Told of each run (`/metrics`' runner figures). */
    observer?: RunnerOptions["observer"];
    /** Given the runner before it runs anything. */
    onRunner?: (runner: Runner) => void;
  } = {},
): Promise<RunnerCounters> {
  const runner = createRunner({
    db,
    log: createLogger("silent"),
    // A probe's next run is its next slot on its grid, anywhere up to an interval after the
    // first: with a minute, one probe in 60 ran twice when this took a second (on a loaded
    // machine); with a day, one in 86,400. (A probe with its own `interval_seconds` keeps it:
    // give such probes a long one in tests that count runs.)
    intervalMs: 24 * 3_600_000,
    timeoutMs: 5_000,
    concurrency: 20,
    retentionDays: 7,
    policy: LOOPBACK_ONLY,
    lookaheadMs: 0,
    retryPauseMs: 1,
    observer,
  });
  onRunner?.(runner);
  await runner.sync();
  while (await runner.poll() > 0) await runner.idle();
  await runner.idle();
  return runner.counters();
}
