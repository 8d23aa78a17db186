/**
 * The clock the service's loops read and set their timers on: the system's, or one a test moves
 * by hand (`server/testing/manual_clock.ts`, `server/testing/runner_clock.ts`).
 *
 * @module
 */

/** Time in milliseconds and timers on it; `@sinonjs/fake-timers` clocks fit. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as number),
};
