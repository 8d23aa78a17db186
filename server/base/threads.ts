/**
 * The service's worker threads (the embedded database, and the probe runs): `node:worker_threads`
 * workers rather than Web Workers, for the one option Web Workers lack, `resourceLimits`.
 *
 * Each thread is a V8 isolate of its own, whose young generation V8 doubles each time enough has
 * survived its collections, up to 16 MiB semi-spaces (some 48 MiB committed), and shrinks again
 * only when the thread allocates less than 1 MB a second. With 1,000 probes the database's thread
 * allocates steadily (each query's text, parameters and rows) while holding 14 MiB of live data,
 * so its committed heap climbed for minutes and then swung between 32 and 95 MiB. Capping each
 * thread's young generation at {@link THREAD_YOUNG_GENERATION_MB} keeps its heap near its live
 * data from the start. The server's own isolate is not capped: under a full HTTP load its requests
 * in flight outlive a small young generation's collections (see docs/performance.md, "HTTP"), and
 * with probes alone it does not grow. A `--max-semi-space-size` flag would override this limit, so
 * `deno task start` gives none.
 *
 * @module
 */
import { setImmediate } from "node:timers";
import { Worker } from "node:worker_threads";

/** A thread's V8 heap: what is live (and garbage not yet collected), and what is committed. */
export interface ThreadHeap {
  heapUsedBytes: number;
  heapTotalBytes: number;
}

/** The heap of the isolate this runs in. */
export function ownHeap(): ThreadHeap {
  const { heapUsed, heapTotal } = Deno.memoryUsage();
  return { heapUsedBytes: heapUsed, heapTotalBytes: heapTotal };
}

/** The young generation of each worker thread, in MiB (both semi-spaces and their large objects). */
export const THREAD_YOUNG_GENERATION_MB = 8;

/** Starts the worker thread of the module at `url`, its young generation capped. */
export function startThread(url: URL): Worker {
  return new Worker(url, {
    resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
  });
}

/**
 * Collects what is posted within one turn of the event loop and hands it to `post` as one batch,
 * once the turn's I/O has been handled: between threads one message of many items costs about
 * what one message of one did (the copy, the wake-up of the other thread), so many probe runs
 * a second cost far fewer messages.
 */
export function batchedPost<T>(post: (batch: T[]) => void): (item: T) => void {
  let batch: T[] = [];
  const flush = () => {
    const sent = batch;
    batch = [];
    post(sent);
  };
  return (item) => {
    if (batch.push(item) === 1) setImmediate(flush);
  };
}
