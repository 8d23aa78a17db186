/**
 * The lag of a runner: how late its runs start now, measured at each tick, and the overload
 * warning in the log when it is `overloadLagMs` or more, written at most once per `warnEveryMs`.
 *
 * @module
 */
import type { Logger } from "../base/log.ts";

export interface LagMeterOptions {
  log: Logger;
  /** The runner named in the warning. */
  runner: string;
  overloadLagMs: number;
  warnEveryMs: number;
  /** `overloadWarnings` is counted here. */
  counters: { overloadWarnings: number };
}

export interface LagMeter {
  /** How late runs start now (ms), as of the last `measure`. */
  readonly lagMs: number;
  /** Behind by `overloadLagMs` or more. */
  readonly overloaded: boolean;
  /**
   * The last claim took all the window let it (or none was let): more may be due than the
   * runner holds, so a tick that starts nothing is not a sign that it has caught up.
   */
  full: boolean;
  /** A run started `slipMs` after its due time. */
  started(slipMs: number): void;
  /**
   * At a tick, `elapsedMs` after the last: `frontMs` is the wait of the oldest due run queued
   * for a slot (null when none waits for a slot). Returns the lag.
   */
  measure(elapsedMs: number, frontMs: number | null): number;
  /** When overloaded, says so (at most once per `warnEveryMs`), and what to do. */
  warnIfOverloaded(now: number, runsPerSecond: number): void;
}

/** The lag meter of one runner (see the module's note). */
export function createLagMeter(
  { log, runner, overloadLagMs, warnEveryMs, counters }: LagMeterOptions,
): LagMeter {
  let lagMs = 0;
  /** Least slip of the runs started since the last tick (ms), or null. */
  let startSlipMs: number | null = null;
  /** When the last overload warning was written. */
  let warnedAt: number | null = null;
  let full = false;
  return {
    get full() {
      return full;
    },
    set full(value) {
      full = value;
    },
    get lagMs() {
      return lagMs;
    },
    get overloaded() {
      return lagMs >= overloadLagMs;
    },
    started(slip) {
      startSlipMs = startSlipMs === null ? slip : Math.min(startSlipMs, slip);
    },
    measure(elapsed, front) {
      // How late runs start now: the wait of the oldest due run queued for a slot (claimed
      // oldest due first, the queue's front is the front of the schedule); with none queued,
      // the least slip of the runs started since the last tick; with none started either,
      // while the window is full (more may be due than this runner holds), the last figure plus
      // the time since; else nothing is late.
      lagMs = Math.max(
        0,
        front ?? startSlipMs ?? (full && lagMs > 0 ? lagMs + elapsed : 0),
      );
      startSlipMs = null;
      return lagMs;
    },
    warnIfOverloaded(now, runsPerSecond) {
      if (lagMs < overloadLagMs) return;
      if (warnedAt !== null && now - warnedAt < warnEveryMs) return;
      warnedAt = now;
      counters.overloadWarnings++;
      log.warn("runner overloaded: probe runs start late", {
        runner,
        behind_seconds: Math.round(lagMs / 100) / 10,
        runs_per_second: Math.round(runsPerSecond),
        hint: "start another runner on the same database (deno task runner), or set a longer " +
          "PROBE_INTERVAL_SECONDS",
      });
    },
  };
}
