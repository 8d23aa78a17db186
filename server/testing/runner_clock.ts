/**
 * A runner clock made of `@sinonjs/fake-timers` for tests: time moves only when the test says so
 * (`fake.tick`, `fake.tickAsync`), timers included.
 *
 * @module
 */
import FakeTimers from "@sinonjs/fake-timers";
import type { RunnerClock } from "../runner/runner.ts";

/** A fake clock starting at `start` (ms) and the runner clock over it. */
export function fakeClock(start: number): { fake: FakeTimers.Clock; clock: RunnerClock } {
  const fake = FakeTimers.createClock(start);
  const clock: RunnerClock = {
    now: () => fake.now,
    setTimeout: (fn, ms) => fake.setTimeout(fn, ms),
    clearTimeout: (id) => fake.clearTimeout(id as FakeTimers.TimerId),
  };
  return { fake, clock };
}
