/**
 * Group commit for pings: a ping's answer waits until the transaction holding it has committed,
 * so nothing acknowledged is lost, and the database sees one transaction per batch instead of
 * one per ping. A batch is sent `lingerMs` after its first ping, or at once when `maxBatch` are
 * waiting; while one batch commits the next gathers, so batches grow with the load. Past
 * `maxWaiting` pings waiting, new ones are refused (the caller answers 429) rather than queued
 * without bound.
 *
 * @module
 */
import { errorFields, type Logger } from "../../base/log.ts";
import type { Db } from "../../storage/database.ts";
import { type Ping, type PreparedPings, recordPings } from "./pings.ts";

export interface PingBatcherOptions {
  db: Db;
  log: Logger;
  /** The built-in location's name, as alerts name it. */
  localName?: string;
  lingerMs?: number;
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
  { db, log, localName, lingerMs = 5, maxBatch = 500, maxWaiting = 20_000, onBatch, prepare }:
    PingBatcherOptions,
): PingBatcher {
  const prepared: PreparedPings | undefined = prepare ? new Map() : undefined;
  let waiting: Waiting[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> | null = null;

  async function commit(batch: Waiting[]): Promise<void> {
    const started = performance.now();
    for (let attempt = 1;; attempt++) {
      try {
        const found = await db.transaction().execute((trx) =>
          recordPings(trx, batch.map((w) => w.ping), localName, prepared)
        );
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

  function flush(): void {
    timer = undefined;
    if (flushing || waiting.length === 0) return;
    const batch = waiting.slice(0, maxBatch);
    waiting = waiting.slice(batch.length);
    flushing = commit(batch).finally(() => {
      flushing = null;
      // Those that came meanwhile waited for a whole commit already: at once.
      if (waiting.length > 0) flush();
    });
  }

  return {
    submit(ping) {
      if (waiting.length >= maxWaiting) return Promise.resolve(null);
      return new Promise<boolean>((resolve, reject) => {
        waiting.push({ ping, resolve, reject });
        if (flushing) return;
        if (waiting.length >= maxBatch) {
          clearTimeout(timer);
          flush();
        } else if (timer === undefined) {
          timer = setTimeout(flush, lingerMs);
        }
      });
    },
    async drain() {
      while (flushing || waiting.length > 0) {
        if (!flushing) flush();
        await flushing;
      }
    },
  };
}
