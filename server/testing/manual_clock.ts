import type { Clock } from "../base/clock.ts";

interface Sleeper {
  until: number;
  fire: () => void;
}

/**
 * A clock for tests: time moves only when `advance` is called, and `sleepsReach` tells when the code
 * under test has gone back to sleep (set a timer), so a test knows a loop's run is over without
 * waiting. A timer due at once fires at once, as the system's does, and is not a sleep.
 */
export class ManualClock implements Clock {
  #now: number;
  #sleepers = new Set<Sleeper>();
  #sleeps = 0;
  #watchers: { count: number; resolve: () => void }[] = [];

  constructor(start: Date | string = "2030-01-01T00:00:00Z") {
    this.#now = new Date(start).getTime();
  }

  now(): number {
    return this.#now;
  }

  /** The time as a date. */
  date(): Date {
    return new Date(this.#now);
  }

  /** How many timers (of a wait longer than none) were set so far. */
  get sleeps(): number {
    return this.#sleeps;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    if (ms <= 0) return { immediate: setTimeout(fn, 0) };
    this.#sleeps++;
    for (const w of this.#watchers.filter((w) => this.#sleeps >= w.count)) {
      this.#watchers.splice(this.#watchers.indexOf(w), 1);
      w.resolve();
    }
    const sleeper: Sleeper = {
      until: this.#now + ms,
      fire: () => {
        this.#sleepers.delete(sleeper);
        fn();
      },
    };
    this.#sleepers.add(sleeper);
    return sleeper;
  }

  clearTimeout(id: unknown): void {
    if (id && typeof id === "object" && "immediate" in id) clearTimeout(id.immediate as number);
    else this.#sleepers.delete(id as Sleeper);
  }

  /**
   * Resolves once timers have been set `count` times in all. Rejects after `guardMs` of real
   * time, so a loop that never goes back to sleep fails the test instead of hanging it.
   */
  sleepsReach(count: number, guardMs = 15_000): Promise<void> {
    if (this.#sleeps >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const guard: { timer?: ReturnType<typeof setTimeout>; reached?: boolean } = {};
      const watcher = {
        count,
        resolve: () => {
          guard.reached = true;
          clearTimeout(guard.timer);
          resolve();
        },
      };
      // Watching before the guard's timer is set: Deno's first timer of a process may run the
      // pending callbacks (the loop's sleep among them) while it is being set.
      this.#watchers.push(watcher);
      guard.timer = setTimeout(() => {
        this.#watchers = this.#watchers.filter((w) => w !== watcher);
        reject(new Error(`a timer was set ${this.#sleeps} times, not ${count}`));
      }, guardMs);
      if (guard.reached) clearTimeout(guard.timer);
    });
  }

  /** Moves time forward and fires every timer that is due by then. */
  advance(ms: number): void {
    this.#now += ms;
    for (const s of [...this.#sleepers]) if (s.until <= this.#now) s.fire();
  }

  /** How many timers are waiting. */
  get sleeping(): number {
    return this.#sleepers.size;
  }
}
