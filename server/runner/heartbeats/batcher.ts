/**
 * Group commit for pings: a ping's answer waits until the transaction holding it has committed,
 * so nothing acknowledged is lost, and the database sees one transaction per batch instead of
 * one per ping. A batch starts as soon as one of `maxInFlight` slots is free (on the next turn
 * of the event loop, so that the pings read together go together), with up to `maxBatch` of the
 * pings waiting; while the slots commit the next batch gathers, so batches grow with the load.
 * With more than one slot (PostgreSQL, whose pool has several connections) a ping waits for
 * less than a whole commit; a ping whose token a batch in flight holds waits for it, so that
 * each heartbeat's pings are applied in the order they came. Past `maxWaiting` pings waiting,
 * new ones are refused (the caller answers 429) rather than queued without bound.
 *
 * @module
 */
import { errorFields, type Logger } from "../../base/log.ts";
import type { Db } from "../../storage/database.ts";
import { type Ping, type PreparedPings, recordPingBatch } from "./pings.ts";

export interface PingBatcherOptions {
  db: Db;
  log: Logger;
  /** The built-in location's name, as alerts name it. */
  localName?: string;
  /** Batches committing at once: 1 unless given (the embedded database has one session). */
  maxInFlight?: number;
  maxBatch?: number;
  maxWaiting?: number;
  /** Told of each batch committed: its size and how long it took (ms). */
  onBatch?: (size: number, ms: number) => void;
  /**
   * Keep the batches' statements prepared in the session (the embedded database, whose one
   * session lasts; see `PreparedPings`).
   */
  prepare?: boolean;
}

export interface PingBatcher {
  /** Whether the ping's token named a heartbeat, once its batch committed; null when refused. */
  submit(ping: Ping): Promise<boolean | null>;
  /** Waits for the pings taken so far to be committed. */
  drain(): Promise<void>;
}

interface Waiting {
  ping: Ping;
  resolve: (found: boolean) => void;
  reject: (error: unknown) => void;
}

const codeOf = (error: unknown) => String((error as { code?: unknown })?.code);

/**
 * Deadlocks and serialization failures, and a prepared statement the session no longer has (a
 * new session: they are prepared again): the batch is tried again.
 */
const retryable = (error: unknown) => ["40P01", "40001", "26000"].includes(codeOf(error));

export function createPingBatcher(
  { db, log, localName, maxInFlight = 1, maxBatch = 500, maxWaiting = 20_000, onBatch, prepare }:
    PingBatcherOptions,
): PingBatcher {
  const prepared: PreparedPings | undefined = prepare ? new Map() : undefined;
  let waiting: Waiting[] = [];
  let scheduled = false;
  const inFlight = new Set<Promise<void>>();
  /** The tokens of the batches in flight, with how many of their pings each holds. */
  const held = new Map<string, number>();

  async function commit(batch: Waiting[]): Promise<void> {
    const started = performance.now();
    for (let attempt = 1;; attempt++) {
      try {
        const found = await recordPingBatch(db, batch.map((w) => w.ping), localName, prepared);
        onBatch?.(batch.length, performance.now() - started);
        batch.forEach((w, i) => w.resolve(found[i]));
        return;
      } catch (error) {
        if (codeOf(error) === "26000") prepared?.clear();
        if (attempt < 3 && retryable(error)) continue;
        log.error("heartbeat pings failed", { pings: batch.length, ...errorFields(error) });
        batch.forEach((w) => w.reject(error));
        return;
      }
    }
  }

  /** The next batch: up to `maxBatch` of the waiting pings whose tokens no batch in flight holds. */
  function take(): Waiting[] {
    if (held.size === 0) {
      const batch = waiting.slice(0, maxBatch);
      waiting = waiting.slice(batch.length);
      return batch;
    }
    const batch: Waiting[] = [];
    const left: Waiting[] = [];
    for (const w of waiting) {
      if (batch.length < maxBatch && !held.has(w.ping.token)) batch.push(w);
      else left.push(w);
    }
    waiting = left;
    return batch;
  }

  function flush(): void {
    scheduled = false;
    while (inFlight.size < maxInFlight && waiting.length > 0) {
      const batch = take();
      if (batch.length === 0) return;
      for (const w of batch) held.set(w.ping.token, (held.get(w.ping.token) ?? 0) + 1);
      const done: Promise<void> = commit(batch).finally(() => {
        inFlight.delete(done);
        for (const w of batch) {
          const left = held.get(w.ping.token)! - 1;
          if (left === 0) held.delete(w.ping.token);
          else held.set(w.ping.token, left);
        }
        // Those that came meanwhile waited for a commit already: at once.
        flush();
      });
      inFlight.add(done);
    }
  }

  return {
    submit(ping) {
      if (waiting.length >= maxWaiting) return Promise.resolve(null);
      return new Promise<boolean>((resolve, reject) => {
        waiting.push({ ping, resolve, reject });
        if (scheduled || inFlight.size >= maxInFlight) return;
        scheduled = true;
        if (waiting.length >= maxBatch) queueMicrotask(flush);
        else setTimeout(flush, 0);
      });
    },
    async drain() {
      while (inFlight.size > 0 || waiting.length > 0) {
        flush();
        await Promise.all(inFlight);
      }
    },
  };
}
