/**
 * A runner clock made of `@sinonjs/fake-timers` for tests: time moves only when the test says so
 * (`fake.tick`, `fake.tickAsync`), timers included.
 *
 * @module
 */
import FakeTimers from "@sinonjs/fake-timers";
import type { Clock } from "../base/clock.ts";

/** A fake clock starting at `start` (ms) and the runner clock over it. */
export function fakeClock(start: number): { fake: FakeTimers.Clock; clock: Clock } {
  const fake = FakeTimers.createClock(start);
  const clock: Clock = {
    now: () => fake.now,
    setTimeout: (fn, ms) => fake.setTimeout(fn, ms),
    clearTimeout: (id) => fake.clearTimeout(id as FakeTimers.TimerId),
  };
  return { fake, clock };
}
