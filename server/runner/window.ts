/**
 * The claim window of a runner: the most runs it holds claimed and not over at once, resized at
 * each tick from what it observes (runs made per second lately, mean run and recording times).
 * `claimWindow` is the pure sizing; `createWindow` keeps the figures it is sized from.
 *
 * @module
 */

/**
 * The claim window: the most runs a runner holds claimed and not over at once. It covers the
 * runs made per second lately (`rate`) for `coverMs` (what is claimed ahead, a poll or two, and
 * slack), at least twice the slots, but never more than the runner can start in half a lease
 * (`startWithinMs`): its slots over the mean run time, and its recording over the mean
 * recording time per run. So every run claimed starts before its lease would run out, and when
 * more is due than the runner can make, it holds about `coverMs` of what it makes, oldest due
 * first; the rest stays on the schedule for other runners.
 */
export function claimWindow(
  { rate, concurrency, coverMs, startWithinMs, runMs, recordMs, maxClaimed }: {
    /** Runs made per second lately. */
    rate: number;
    concurrency: number;
    coverMs: number;
    startWithinMs: number;
    /** Mean run time (ms); unknown (no run yet) as null. */
    runMs: number | null;
    /** Mean recording time per run (ms); unknown as null. */
    recordMs: number | null;
    maxClaimed: number;
  },
): number {
  const wanted = Math.max(2 * concurrency, rate * coverMs / 1000);
  const canRun = runMs === null ? Infinity : concurrency * startWithinMs / Math.max(runMs, 1);
  const canRecord = recordMs === null ? Infinity : startWithinMs / Math.max(recordMs, 0.001);
  return Math.max(1, Math.floor(Math.min(wanted, canRun, canRecord, maxClaimed)));
}

export interface ClaimWindow {
  /** The window now: twice the slots (within `maxClaimed`) until the first `resize`. */
  readonly size: number;
  /** Runs made per second lately (smoothed over ticks). */
  readonly rate: number;
  /** Mean run time (ms), or null before the first run. */
  readonly runMs: number | null;
  /** A run ended; `runMs` is how long it ran (undefined: it did not run, e.g. disabled). */
  ended(runMs?: number): void;
  /** At a tick, `elapsedMs` after the last: updates the rate and resizes (`claimWindow`). */
  resize(elapsedMs: number, recordMs: number | null): number;
}

/** The claim window of one runner (see the module's note). */
export function createWindow(
  { concurrency, maxClaimed, coverMs, startWithinMs }: {
    concurrency: number;
    /** The ceiling, whatever the sizing asks for. */
    maxClaimed: number;
    coverMs: number;
    startWithinMs: number;
  },
): ClaimWindow {
  let size = Math.min(2 * concurrency, maxClaimed);
  let ended = 0;
  let rate = 0;
  let runMs: number | null = null;
  return {
    get size() {
      return size;
    },
    get rate() {
      return rate;
    },
    get runMs() {
      return runMs;
    },
    ended(ms) {
      if (ms !== undefined) runMs = runMs === null ? ms : runMs + (ms - runMs) * 0.05;
      ended++;
    },
    resize(elapsedMs, recordMs) {
      const now = ended * 1000 / elapsedMs;
      ended = 0;
      rate = rate === 0 ? now : rate + (now - rate) * 0.3;
      size = claimWindow({
        rate,
        concurrency,
        coverMs,
        startWithinMs,
        runMs,
        recordMs,
        maxClaimed,
      });
      return size;
    },
  };
}
