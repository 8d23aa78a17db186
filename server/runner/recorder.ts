/**
 * The recording buffer of a runner: runs that ended wait here and are written in batches of
 * `flushBatch` (`recordRuns`), one batch at a time. It measures the mean recording time per run
 * (for the claim window) and keeps what failed to be recorded for the next flush, within bounds.
 *
 * @module
 */
import type { Db } from "../storage/database.ts";
import { errorFields, type Logger } from "../base/log.ts";
import { type Completed, recordRuns, type Verdicts } from "./store.ts";
import { LOCAL } from "../domain/locations.ts";

export interface RecorderOptions {
  db: Db;
  log: Logger;
  /** The runner named in the results (and whose leases they are recorded under). */
  runner: string;
  now(): number;
  flushBatch: number;
  /** Counted as batches are recorded. */
  counters: { recorded: number; skipped: number; lost: number };
  /** A run is no longer held: recorded, or dropped from a buffer grown too long. */
  released(run: Completed): void;
  /** The built-in location's name and the service-wide interval, for probes' verdicts. */
  verdicts?: Verdicts;
}

export interface Recorder {
  /** Runs waiting to be recorded. */
  readonly length: number;
  /** Mean recording time per run (ms), from batches big enough to tell; null until known. */
  readonly recordMs: number | null;
  /** Adds a run that ended (recorded at the next `flush`). */
  add(run: Completed): void;
  /** Records the runs buffered (and waits for a recording under way). */
  flush(): Promise<void>;
}

/** A recording buffer for one runner (see the module's note). */
export function createRecorder(
  { db, log, runner, now, flushBatch, counters, released, verdicts }: RecorderOptions,
): Recorder {
  let buffer: Completed[] = [];
  let flushing: Promise<void> | null = null;
  let recordMs: number | null = null;

  function flush(): Promise<void> {
    if (flushing) return flushing.then(() => (buffer.length ? flush() : undefined));
    flushing = (async () => {
      while (buffer.length > 0) {
        const batch = buffer.slice(0, flushBatch);
        try {
          const began = now();
          const r = await recordRuns(db, runner, batch, LOCAL, verdicts);
          // Per run, from batches big enough that a transaction's fixed cost does not swamp it
          // (a batch of one when little is due would say recording is slow).
          if (batch.length >= Math.min(flushBatch, 50)) {
            const perRun = (now() - began) / batch.length;
            recordMs = recordMs === null ? perRun : recordMs + (perRun - recordMs) * 0.2;
          }
          buffer = buffer.slice(batch.length);
          for (const c of batch) released(c);
          counters.recorded += r.recorded;
          counters.skipped += r.skipped;
          counters.lost += r.lost;
          if (r.lost > 0) {
            log.warn("runs not recorded: lease lost or probe deleted", { runner, count: r.lost });
          }
        } catch (error) {
          log.error("recording runs failed", errorFields(error));
          // Keep them for the next flush, within bounds; leases run out and others retry.
          if (buffer.length > 20 * flushBatch) {
            for (const c of buffer.slice(0, buffer.length - 20 * flushBatch)) released(c);
            buffer = buffer.slice(buffer.length - 20 * flushBatch);
          }
          return;
        }
      }
    })().finally(() => flushing = null);
    return flushing;
  }

  return {
    get length() {
      return buffer.length;
    },
    get recordMs() {
      return recordMs;
    },
    add(run) {
      buffer.push(run);
    },
    flush,
  };
}
