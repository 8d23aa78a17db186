/**
 * Runs probes in a worker thread (`execute_worker.ts`) instead of on the thread that answers
 * HTTP: reading a 1 MB answer and judging it took the server's event loop long
 * enough to push `/healthz` and keyed reads past 100 ms when many came at once. The runner
 * calls `execute` as it would call `executeProbe`; the worker makes the request and the
 * verdict, and only the result comes back.
 *
 * @module
 */
import type { Worker } from "node:worker_threads";
import { batchedPost, startThread, type ThreadHeap } from "../base/threads.ts";
import { threadEntry } from "../base/files.ts";
import type { ProbeTarget, RunResult } from "./execute.ts";
import type { WorkerReply, WorkerRequest } from "./execute_worker.ts";

export interface WorkerExecutor {
  /** Runs one probe in the worker; rejects only on a defect (executeProbe's failures are values). */
  execute(target: ProbeTarget): Promise<RunResult>;
  /** The worker's heap, for `/metrics`; null while no worker runs. */
  heap(): Promise<ThreadHeap | null>;
  /** Ends the worker; runs still pending reject. */
  close(): void;
}

/** How long a read of the worker's heap waits for its answer. */
const HEAP_READ_MS = 1000;

/** A worker for the probes of one runner, under the given network policy and timeout. */
export function createWorkerExecutor(
  settings: {
    allowNetworks: readonly string[];
    timeoutMs: number;
    userAgent?: string;
    /** The authorities `tls://` probes trust (`PROBE_CA_FILE`); the system's when absent. */
    ca?: string;
  },
): WorkerExecutor {
  const pending = new Map<number, PromiseWithResolvers<RunResult>>();
  let next = 0;
  let worker: Worker | null = null;
  /**
   * Reads of the heap waiting for the worker's answer; one answer serves them all, and a worker
   * that has not answered within `HEAP_READ_MS` answers null.
   */
  let heapReads: ((heap: ThreadHeap | null) => void)[] = [];
  let heapTimer: ReturnType<typeof setTimeout> | undefined;
  const answerHeapReads = (heap: ThreadHeap | null) => {
    clearTimeout(heapTimer);
    for (const answer of heapReads) answer(heap);
    heapReads = [];
  };

  const start = () => {
    const w = startThread(threadEntry("runner/execute_worker.ts"));
    w.on("message", (replies: WorkerReply[] | ThreadHeap) => {
      if (!Array.isArray(replies)) return answerHeapReads(replies);
      for (const data of replies) {
        const waiting = pending.get(data.id);
        if (!waiting) continue;
        pending.delete(data.id);
        if ("result" in data) waiting.resolve(data.result);
        else {
          waiting.reject(Object.assign(new Error(data.error.error), { stack: data.error.stack }));
        }
      }
    });
    // A worker that died takes its runs with it: they reject (the runner logs them and records
    // no result; each probe runs again at its next due time); the next run starts a new worker.
    w.on("error", (error: Error) => {
      failAll(new Error(`probe worker failed: ${error.message}`));
      void w.terminate();
      if (worker === w) worker = null;
    });
    const hello: WorkerRequest = {
      kind: "settings",
      allowNetworks: [...settings.allowNetworks],
      timeoutMs: settings.timeoutMs,
      userAgent: settings.userAgent,
      ca: settings.ca,
    };
    w.postMessage(hello);
    return w;
  };

  const failAll = (error: Error) => {
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
    answerHeapReads(null);
  };

  // The runs started in one turn of the event loop go to the worker in one message; those failed
  // meanwhile with a worker that ended (`failAll`) are not sent.
  const send = batchedPost<{ id: number; target: ProbeTarget }>((batch) => {
    const runs = batch.filter((run) => pending.has(run.id));
    if (!worker || runs.length === 0) return;
    const message: WorkerRequest = { kind: "runs", runs };
    worker.postMessage(message);
  });

  return {
    execute(target) {
      worker ??= start();
      const id = next++;
      const waiting = Promise.withResolvers<RunResult>();
      pending.set(id, waiting);
      send({ id, target });
      return waiting.promise;
    },
    heap() {
      if (!worker) return Promise.resolve(null);
      const { promise, resolve } = Promise.withResolvers<ThreadHeap | null>();
      if (heapReads.push(resolve) === 1) {
        const message: WorkerRequest = { kind: "heap" };
        worker.postMessage(message);
        heapTimer = setTimeout(() => answerHeapReads(null), HEAP_READ_MS);
      }
      return promise;
    },
    close() {
      void worker?.terminate();
      worker = null;
      failAll(new Error("probe worker closed"));
    },
  };
}
