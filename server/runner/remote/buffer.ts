/**
 * The remote runner's results waiting to be posted (docs/locations.md, "Remote runners"): kept
 * in memory, oldest first, at most `max` of them and none older than `maxAgeMs`. Past either
 * bound the oldest are dropped and counted: their runs' leases ran out long before, so another
 * runner of the location has made them again, or they were never going to count.
 *
 * @module
 */
import type { PostedResult } from "@probe/shared";

export interface Buffered {
  result: PostedResult;
  /** When it was added (ms). */
  at: number;
}

export class ResultBuffer {
  #items: Buffered[] = [];
  #dropped = 0;

  constructor(
    readonly max: number,
    readonly maxAgeMs: number,
    readonly now: () => number = Date.now,
  ) {}

  get length(): number {
    return this.#items.length;
  }

  /** Results dropped so far for the bounds. */
  get dropped(): number {
    return this.#dropped;
  }

  add(result: PostedResult): void {
    this.#items.push({ result, at: this.now() });
    if (this.#items.length > this.max) {
      this.#dropped += this.#items.length - this.max;
      this.#items.splice(0, this.#items.length - this.max);
    }
  }

  /** Drops what is older than `maxAgeMs`; returns how many went. */
  expire(): number {
    const oldest = this.now() - this.maxAgeMs;
    const stale = this.#items.findIndex((b) => b.at >= oldest);
    const count = stale === -1 ? this.#items.length : stale;
    if (count > 0) {
      this.#items.splice(0, count);
      this.#dropped += count;
    }
    return count;
  }

  /** The oldest `n` results, left in the buffer until `remove` takes them. */
  peek(n: number): PostedResult[] {
    return this.#items.slice(0, n).map((b) => b.result);
  }

  /** Takes out the results of these runs (delivered, or refused for good). */
  remove(runIds: ReadonlySet<string>): void {
    this.#items = this.#items.filter((b) => !runIds.has(b.result.run_id));
  }
}
