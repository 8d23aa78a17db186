/**
 * The clock a runner and its parts read and set their timers on: the system's, or a fake one in
 * tests (`server/testing/runner_clock.ts`).
 *
 * @module
 */

/** The clock a runner reads and sets its timers on; `@sinonjs/fake-timers` clocks fit. */
export interface RunnerClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

export const systemClock: RunnerClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as number),
};
