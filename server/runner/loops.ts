/**
 * The loops of a runner: tasks run every so often on the runner's clock (`server/base/loop.ts`),
 * started and stopped together.
 *
 * @module
 */
import type { Clock } from "../base/clock.ts";
import type { Logger } from "../base/log.ts";
import { createLoop, type Loop } from "../base/loop.ts";

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
  /** Stops: no run starts after it; waits for the tasks running. False when already stopped. */
  stop(): Promise<boolean>;
}

/** The loops of one runner (see the module's note). */
export function createLoops(clock: Clock, log: Logger): Loops {
  let stopped = true;
  const loops: Loop[] = [];
  return {
    get stopped() {
      return stopped;
    },
    every(name, everyMs, task, firstMs = 0) {
      if (stopped) return;
      const loop = createLoop({ name: `runner ${name}`, clock, log, everyMs, firstMs, task });
      loops.push(loop);
      loop.start();
    },
    start() {
      if (!stopped) return false;
      stopped = false;
      return true;
    },
    async stop() {
      if (stopped) return false;
      stopped = true;
      await Promise.all(loops.splice(0).map((loop) => loop.stop()));
      return true;
    },
  };
}
