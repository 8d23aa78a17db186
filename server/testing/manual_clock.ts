import type { Clock } from "../alerting/iam_alive/clock.ts";

interface Sleeper {
  until: number;
  resolve: () => void;
}

/**
 * A clock for tests: time moves only when `advance` is called, and `settled` tells when the code
 * under test has gone back to sleep, so a test knows a loop iteration is over without waiting.
 */
export class ManualClock implements Clock {
  #now: number;
  #sleepers = new Set<Sleeper>();
  #sleeps = 0;
  #watchers: { count: number; resolve: () => void }[] = [];

  constructor(start: Date | string = "2030-01-01T00:00:00Z") {
    this.#now = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.#now);
  }

  /** How many times `sleep` was called so far. */
  get sleeps(): number {
    return this.#sleeps;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.#sleeps++;
    for (const w of this.#watchers.filter((w) => this.#sleeps >= w.count)) {
      this.#watchers.splice(this.#watchers.indexOf(w), 1);
      w.resolve();
    }
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const sleeper: Sleeper = {
        until: this.#now + ms,
        resolve: () => {
          this.#sleepers.delete(sleeper);
          resolve();
        },
      };
      this.#sleepers.add(sleeper);
      signal?.addEventListener("abort", () => sleeper.resolve(), { once: true });
    });
  }

  /**
   * Resolves once `sleep` has been called `count` times in all. Rejects after `guardMs` of real
   * time, so a loop that never goes back to sleep fails the test instead of hanging it.
   */
  sleepsReach(count: number, guardMs = 15_000): Promise<void> {
    if (this.#sleeps >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const guard = setTimeout(() => {
        this.#watchers = this.#watchers.filter((w) => w !== watcher);
        reject(new Error(`sleep was called ${this.#sleeps} times, not ${count}`));
      }, guardMs);
      const watcher = {
        count,
        resolve: () => {
          clearTimeout(guard);
          resolve();
        },
      };
      this.#watchers.push(watcher);
    });
  }

  /** Moves time forward and wakes every sleeper that is due by then. */
  advance(ms: number): void {
    this.#now += ms;
    for (const s of [...this.#sleepers]) if (s.until <= this.#now) s.resolve();
  }

  /** How many sleepers are waiting. */
  get sleeping(): number {
    return this.#sleepers.size;
  }
}
