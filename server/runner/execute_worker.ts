/**
 * The worker that runs probes off the thread that answers HTTP: the request, reading
 * the body and judging it (`executeProbe`) happen here, so that a target's answer, however
 * large or hostile, costs the server's event loop nothing but a message. Started by
 * `worker_executor.ts`; messages are `WorkerRequest` in, `WorkerReply` out.
 *
 * @module
 */
import { parentPort } from "node:worker_threads";
import { createNetworkPolicy, reusingResolver } from "../base/outbound/network_policy.ts";
import { errorFields } from "../base/log.ts";
import { batchedPost, ownHeap, type ThreadHeap } from "../base/threads.ts";
import { executeProbe, type ProbeTarget, type RunResult } from "./execute.ts";

/** What the worker is told: its settings once, then probes to run. */
export type WorkerRequest =
  | {
    kind: "settings";
    allowNetworks: string[];
    timeoutMs: number;
    userAgent?: string;
    /** The authorities `tls://` probes trust; the system's when absent. */
    ca?: string;
  }
  | { kind: "runs"; runs: { id: number; target: ProbeTarget }[] }
  | { kind: "heap" };

/**
 * What it answers for each run: its result, or the defect that kept it from one. Replies go in
 * batches (`WorkerReply[]`), as runs come (`batchedPost`); a `heap` request is answered on its
 * own, with the thread's `ThreadHeap`.
 */
export type WorkerReply =
  | { id: number; result: RunResult }
  | { id: number; error: { error: string; stack?: unknown } };

let run: ((target: ProbeTarget) => Promise<RunResult>) | undefined;
const reply = batchedPost<WorkerReply>((replies) => parentPort?.postMessage(replies));

async function runOne(id: number, target: ProbeTarget) {
  try {
    reply({ id, result: await run!(target) });
  } catch (error) {
    const { error: message, stack } = errorFields(error);
    reply({ id, error: { error: String(message), stack } });
  }
}

parentPort?.on("message", (data: WorkerRequest) => {
  if (data.kind === "settings") {
    const policy = createNetworkPolicy(data.allowNetworks);
    // One resolver for every run of every kind: probes of one host share its lookups.
    const resolve = reusingResolver();
    run = (target) =>
      executeProbe(target, {
        policy,
        resolve,
        timeoutMs: data.timeoutMs,
        userAgent: data.userAgent,
        ca: data.ca,
      });
    return;
  }
  if (data.kind === "heap") {
    const heap: ThreadHeap = ownHeap();
    parentPort?.postMessage(heap);
    return;
  }
  for (const { id, target } of data.runs) void runOne(id, target);
});
