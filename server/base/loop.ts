/**
 * A background loop: a task run on a clock until stopped, again after a pause, at once when
 * woken (a `NOTIFY`, a setting changed) or when the task says more is waiting, later when it
 * fails. Stopping waits for the run under way.
 *
 * @module
 */
import type { Clock } from "./clock.ts";
import { errorFields, type Logger } from "./log.ts";

export interface LoopOptions {
  /** Names the loop in the log line of a failed run (`<name> failed`). */
  name: string;
  clock: Clock;
  log: Logger;
  /** The pause after a run (ms); null for a loop that runs only when woken. */
  everyMs: number | null;
  /** The wait before the first run (ms), on the clock's timer; at once, in `start`, when unset. */
  firstMs?: number;
  /**
   * The longest pause after failures in a row (ms): each doubles the one before, from `everyMs`.
   * `everyMs` by default (no back-off).
   */
  maxBackoffMs?: number;
  /** One run; true when more is waiting (the next run comes at once). */
  task: () => Promise<unknown>;
}

export interface Loop {
  /** Stopped: before `start` and from `stop` on. */
  readonly stopped: boolean;
  /** Starts the loop; false when it was started already. */
  start(): boolean;
  /** Runs now, or as soon as the run under way ends; nothing while stopped. */
  wake(): void;
  /** Stops: no run starts after it; waits for the one under way. False when already stopped. */
  stop(): Promise<boolean>;
}

/** A loop over `task` (see the module's note). */
export function createLoop(options: LoopOptions): Loop {
  const { name, clock, log, everyMs, task } = options;
  let stopped = true;
  let timer: unknown;
  let running: Promise<void> | null = null;
  let again = false;
  let failures = 0;

  const pause = () => {
    if (everyMs === null) return null;
    if (failures === 0) return everyMs;
    const cap = Math.max(everyMs, options.maxBackoffMs ?? everyMs);
    return Math.min(everyMs * 2 ** Math.min(failures - 1, 30), cap);
  };

  function schedule(ms: number | null) {
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = undefined;
    if (stopped || ms === null) return;
    timer = clock.setTimeout(run, ms);
  }

  function run() {
    timer = undefined;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    again = false;
    running = task().then(
      (more) => {
        failures = 0;
        if (more === true) again = true;
      },
      (error) => {
        failures++;
        log.error(`${name} failed`, errorFields(error));
      },
    ).finally(() => {
      running = null;
      schedule(again ? 0 : pause());
    });
  }

  return {
    get stopped() {
      return stopped;
    },
    start() {
      if (!stopped) return false;
      stopped = false;
      if (options.firstMs === undefined) run();
      else schedule(options.firstMs);
      return true;
    },
    wake() {
      if (stopped) return;
      if (running) again = true;
      else {
        schedule(null);
        run();
      }
    },
    async stop() {
      if (stopped) return false;
      stopped = true;
      schedule(null);
      await running;
      return true;
    },
  };
}
