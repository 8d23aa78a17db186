/**
 * Answers bounded in size, so no request can make the server build an unbounded string: no answer,
 * and no tRPC batch as a whole, is built past `MAX_ANSWER_BYTES` of JSON text. A single answer is
 * serialised piece by piece and given up as soon as it passes the limit (so a list of big items
 * never becomes one giant string, nor a `RangeError: Invalid string length`); a batch counts each
 * call's result as it resolves, runs a few calls at a time, and stops calling once the total has
 * passed the limit. Either way the caller gets 413 `response_too_large`, and should page
 * (`limit`/`after`) or split the batch.
 *
 * Sizes are counted in characters of JSON text: the answer's bytes when it is ASCII (it is, but
 * for non-ASCII text in labels and headers, which counts one per UTF-16 unit).
 *
 * @module
 */
import { AnswerTooLargeError } from "./errors.ts";

/** The default of `MAX_ANSWER_BYTES`: 16 MiB. */
export const DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * How many queries of tRPC batches run at once in the process, all batches together: a batch
 * of big lists is the heaviest request there is, and three at once must not fill the database's
 * queue ahead of every other caller (single calls and REST are not held here). One: a batch's
 * calls then run in order, and the first result past the limit ends it with no query wasted.
 */
export const BATCH_CALLS_AT_ONCE = 1;

/** A counting semaphore: at most `size` holders at once, the others served in order. */
export class Slots {
  #free: number;
  #waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.#free = size;
  }

  /** Resolves once a slot is held; `release()` gives it back. */
  async acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    // The slot passes to the next waiting holder, or is given back.
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}

/** Containers are taken apart down to this depth; below it values are serialised whole. */
const SPLIT_DEPTH = 4;

const isPlainObject = (value: object): value is Record<string, unknown> => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * An answer with at most this many list items, all its lists together (above the split depth),
 * is serialised by JSON in one go: at most that many items' text is built past the limit, and
 * most answers (one object, a short list) cost a walk instead of a text built piece by piece.
 */
const WHOLE_ITEMS = 16;

/**
 * What is left of `left` once the list items of `value` above the split depth are counted;
 * negative past it, or for a value that serialises itself (`toJSON`: its text is not known).
 */
function itemsLeft(value: unknown, depth: number, left: number): number {
  if (typeof value !== "object" || value === null || depth >= SPLIT_DEPTH) return left;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return -1;
  if (Array.isArray(value)) {
    left -= value.length;
    for (let i = 0; i < value.length && left >= 0; i++) left = itemsLeft(value[i], depth + 1, left);
    return left;
  }
  if (!isPlainObject(value)) return left;
  for (const name in value) {
    left = itemsLeft(value[name], depth + 1, left);
    if (left < 0) break;
  }
  return left;
}

/**
 * `JSON.stringify(value)`, the same text (undefined where it gives undefined), or null as soon as
 * it would pass `maxLength` characters. Arrays and plain objects are serialised an element at a
 * time (down to a few levels: a list's items are serialised whole), so at most one item's text
 * is built past the limit before giving up; an answer of a few items (`WHOLE_ITEMS`) is
 * serialised whole.
 */
export function boundedStringify(value: unknown, maxLength: number): string | undefined | null {
  if (itemsLeft(value, 0, WHOLE_ITEMS) >= 0) {
    const text = JSON.stringify(value);
    return text !== undefined && text.length > maxLength ? null : text;
  }
  const parts: string[] = [];
  let length = 0;
  const add = (text: string) => {
    parts.push(text);
    length += text.length;
    return length <= maxLength;
  };
  // Returns false when over the limit, and "skip" for a value JSON leaves out of an object.
  const write = (raw: unknown, key: string, depth: number): boolean | "skip" => {
    let value = raw;
    if (
      typeof value === "object" && value !== null &&
      typeof (value as { toJSON?: unknown }).toJSON === "function"
    ) {
      value = (value as { toJSON(key: string): unknown }).toJSON(key);
    }
    if (typeof value === "object" && value !== null && depth < SPLIT_DEPTH) {
      if (Array.isArray(value)) {
        if (!add("[")) return false;
        for (let i = 0; i < value.length; i++) {
          if (i > 0 && !add(",")) return false;
          const written = write(value[i], String(i), depth + 1);
          if (written === false) return false;
          if (written === "skip" && !add("null")) return false;
        }
        return add("]");
      }
      if (isPlainObject(value)) {
        if (!add("{")) return false;
        let first = true;
        for (const name of Object.keys(value)) {
          const item = value[name];
          if (item === undefined || typeof item === "function" || typeof item === "symbol") {
            continue;
          }
          if (!add(`${first ? "" : ","}${JSON.stringify(name)}:`)) return false;
          const written = write(item, name, depth + 1);
          if (written === false) return false;
          // toJSON gave undefined: JSON leaves the member out; take its name back.
          if (written === "skip") {
            const dropped = parts.pop()!;
            length -= dropped.length;
            continue;
          }
          first = false;
        }
        return add("}");
      }
    }
    // Leaves, and containers below the split depth: JSON's own serialisation, whole.
    const text = JSON.stringify(value);
    if (text === undefined) return "skip";
    return add(text);
  };
  const written = write(value, "", 0);
  if (written === false) return null;
  return written === "skip" ? undefined : parts.join("");
}

/**
 * A list's items counted against the `room` (characters) its answer may still build: it throws
 * {@link AnswerTooLargeError} (of the limit `maxBytes`) as soon as they are known to pass it, so
 * such a list stops reading there instead of being read whole and refused after. It only ever
 * counts less than the answer will hold, so a list that fits is never refused here (the answer's
 * own check has the last word).
 */
export interface ItemMeter {
  /** Before the items are read: `chars` is at least what their JSON text will take. */
  expect(chars: number): void;
  /** As they are read: each counts its JSON text and one comma. */
  count(items: readonly unknown[]): void;
}

export function itemMeter(room: number, maxBytes: number): ItemMeter {
  let left = room;
  const refuse = () => new AnswerTooLargeError(maxBytes);
  return {
    expect(chars) {
      if (chars > left) throw refuse();
    },
    count(items) {
      for (const item of items) {
        left -= (JSON.stringify(item)?.length ?? 0) + 1;
        if (left < 0) throw refuse();
      }
    },
  };
}

/**
 * What one tRPC batch may still build, shared by its calls (`Context.answerBudget`): each call's
 * result is counted once it resolves, and calls wait for one of `slots` (shared by every batch
 * of the process), so a batch past the limit stops calling the database instead of building
 * every answer first, and big batches at once queue behind each other, not ahead of everyone.
 */
export class AnswerBudget {
  #used = 0;
  /** Whether some call's result did not fit: the batch is answered 413 as a whole. */
  exceeded = false;
  /**
   * The database's failure of one of the batch's calls: the calls left fail with it at once
   * instead of each waiting its turn for the same deadline (one at a time, 50 calls during an
   * outage would take 50 deadlines).
   */
  unavailable: Error | null = null;

  constructor(readonly maxBytes: number, readonly slots = new Slots(BATCH_CALLS_AT_ONCE)) {}

  /** Characters of results counted so far. */
  get used(): number {
    return this.#used;
  }

  /**
   * Runs `call` when a slot is free, unless the budget is already spent (then it throws
   * {@link AnswerTooLargeError} without calling) or the database failed an earlier call (then it
   * throws that), and counts the result it gives with `size`. `call` must not run another call
   * of the same budget: with one slot that would wait for itself.
   */
  async run<T>(call: () => Promise<T>, size: (result: T) => number | null): Promise<T> {
    await this.slots.acquire();
    try {
      if (this.exceeded) throw new AnswerTooLargeError(this.maxBytes);
      if (this.unavailable) throw this.unavailable;
      const result = await call();
      const bytes = size(result);
      if (bytes === null || (this.#used += bytes) > this.maxBytes) {
        this.exceeded = true;
        throw new AnswerTooLargeError(this.maxBytes);
      }
      return result;
    } finally {
      this.slots.release();
    }
  }

  /** What is left to build, for `boundedStringify`. */
  get remaining(): number {
    return Math.max(0, this.maxBytes - this.#used);
  }
}
