/**
 * The service's worker threads (the embedded database, and the probe runs): `node:worker_threads`
 * workers rather than Web Workers, for the one option Web Workers lack, `resourceLimits`.
 *
 * Each thread is a V8 isolate of its own, whose young generation V8 doubles each time enough has
 * survived its collections, up to 16 MiB semi-spaces (some 48 MiB committed), and shrinks again
 * only when the thread falls idle. With 1,000 probes the database's thread allocates steadily
 * (each query's text, parameters and rows) while holding 14 MiB of live data, so its committed
 * heap climbed for minutes and then swung between 32 and 95 MiB. Capping each thread's young
 * generation at {@link THREAD_YOUNG_GENERATION_MB} keeps its heap near its live data from the
 * start. The server's own isolate, which answers HTTP, keeps V8's largest young generation, but
 * reaches it in one step (`--semi-space-growth-factor=16` in `deno task start`) rather than by
 * doublings spread over half an hour. See docs/performance.md, "Memory".
 *
 * @module
 */
import { Worker } from "node:worker_threads";

/** The young generation of each worker thread, in MiB (both semi-spaces and their large objects). */
export const THREAD_YOUNG_GENERATION_MB = 8;

/** Starts the worker thread of the module at `url`, its young generation capped. */
export function startThread(url: URL): Worker {
  return new Worker(url, {
    resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
  });
}
