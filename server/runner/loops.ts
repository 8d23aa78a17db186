/**
 * The loops of a runner: tasks run every so often on the runner's clock until it stops.
 *
 * @module
 */
import { errorFields, type Logger } from "../base/log.ts";
import type { RunnerClock } from "./clock.ts";

export interface Loops {
  /** Stopped: before `start` and from `stop` on. */
  readonly stopped: boolean;
  /** Leaves the stopped state; returns false when already started. */
  start(): boolean;
  /**
   * Runs `task` in `firstMs` and then every `everyMs` after each run ends (or at once again when
   * it returns true), until stop. A failure is logged as `runner <name> failed`.
   */
  every(name: string, everyMs: number, task: () => Promise<unknown>, firstMs?: number): void;
  /** Stops: clears the timers and waits for the tasks running; false when already stopped. */
  stop(): Promise<boolean>;
}

/** The loops of one runner (see the module's note). */
export function createLoops(clock: RunnerClock, log: Logger): Loops {
  let stopped = true;
  const timers = new Set<unknown>();
  const busy = new Set<Promise<unknown>>();

  function every(name: string, everyMs: number, task: () => Promise<unknown>, firstMs = 0) {
    const tick = async () => {
      timers.delete(timer);
      if (stopped) return;
      let again = false;
      const p = task().then((r) => (again = r === true)).catch((error) =>
        log.error(`runner ${name} failed`, errorFields(error))
      );
      busy.add(p);
      await p;
      busy.delete(p);
      if (stopped) return;
      timer = clock.setTimeout(tick, again ? 0 : everyMs);
      timers.add(timer);
    };
    let timer = clock.setTimeout(tick, firstMs);
    timers.add(timer);
  }

  return {
    get stopped() {
      return stopped;
    },
    every,
    start() {
      if (!stopped) return false;
      stopped = false;
      return true;
    },
    async stop() {
      if (stopped) return false;
      stopped = true;
      for (const timer of timers) clock.clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...busy]);
      return true;
    },
  };
}
