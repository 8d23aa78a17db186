/**
 * The remote runner (issue 21): a location's runner that reaches the service over HTTP(S) with
 * the location's token and never touches the database (docs/locations.md, "Remote runners").
 *
 * - **Claims**: one claim in flight at a time, for as many runs as there are free slots (at most
 *   1,000), long-polling (the service answers as soon as runs are due, or empty after 25 s).
 * - **Runs**: each claimed run starts at its due time, with the executor the built-in runners
 *   use (a worker thread, the same network policy and assertions), and its result joins the
 *   buffer. Runs already claimed go on while the service cannot be reached.
 * - **Results**: posted in batches of up to 1,000 every 200 ms; kept until the service answered
 *   for them (recorded, duplicate or expired), or a 409 said a run was never this location's.
 *   While the service cannot be reached they wait in the buffer, bounded in number and age
 *   (`ResultBuffer`), and go as soon as it answers again, oldest first. A result posted twice
 *   (an answer lost on the way) is recorded once.
 *
 * @module
 */
import { type ClaimedRun, MAX_RESULTS_BATCH, type PostedResult } from "@probe/shared";
import type { Logger } from "../log.ts";
import type { ProbeTarget, RunResult } from "../runner/execute.ts";
import type { ServiceClient } from "./client.ts";
import { ResultBuffer } from "./buffer.ts";

export interface RemoteRunnerOptions {
  client: ServiceClient;
  /** Runs one probe for `location` (its name: the claims say it), as the built-in runners do. */
  execute: (target: ProbeTarget, location: string) => Promise<RunResult>;
  log: Logger;
  runner: string;
  version: string;
  concurrency: number;
  bufferMax: number;
  bufferMaxAgeMs: number;
  now?: () => number;
  /** How often results are posted while some wait. */
  flushEveryMs?: number;
}

export interface RemoteRunnerCounters {
  claimed: number;
  ran: number;
  recorded: number;
  duplicate: number;
  expired: number;
  refused: number;
  dropped: number;
  buffered: number;
  inFlight: number;
}

export interface RemoteRunner {
  start(): void;
  /** Stops claiming, lets the runs in flight end, and posts what waits for up to `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  counters(): RemoteRunnerCounters;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What a runner posts of a run it made: the fields a result has, within the protocol's bounds. */
export function postedOf(run: ClaimedRun, r: RunResult): PostedResult {
  return {
    run_id: run.run_id,
    started_at: r.startedAt.toISOString(),
    duration_ms: Math.min(3_600_000, Math.max(0, Math.round(r.durationMs))),
    outcome: r.outcome,
    http_status: r.httpStatus,
    error: r.error === null ? null : r.error.slice(0, 500),
    address: r.address === null ? null : r.address.slice(0, 100),
    failed_checks: r.failedChecks ? r.failedChecks.slice(0, 100) : null,
  };
}

const targetOf = (run: ClaimedRun): ProbeTarget => ({
  url: run.url,
  method: run.method,
  headers: run.headers,
  body: run.body,
  latency: run.latency,
  expect: run.expect,
  timeoutMs: run.timeout_ms,
});

export function createRemoteRunner(o: RemoteRunnerOptions): RemoteRunner {
  const now = o.now ?? Date.now;
  const buffer = new ResultBuffer(o.bufferMax, o.bufferMaxAgeMs, now);
  const counts = { claimed: 0, ran: 0, recorded: 0, duplicate: 0, expired: 0, refused: 0 };
  const who = { runner: o.runner, version: o.version };
  let inFlight = 0;
  let stopping = false;
  const claimAbort = new AbortController();
  let slotFreed: (() => void) | null = null;
  const loops: Promise<void>[] = [];
  const idle = new Set<Promise<void>>();
  let outage: number | null = null;

  /** Logs an outage once, when it begins, and once when it ends. */
  function reachable(ok: boolean, reason?: string) {
    if (!ok && outage === null) {
      outage = now();
      o.log.warn("service unreachable: runs go on, results wait", { reason });
    } else if (ok && outage !== null) {
      o.log.info("service reachable again", { after_seconds: (now() - outage) / 1000 });
      outage = null;
    }
  }

  function run(claimed: ClaimedRun, location: string) {
    inFlight++;
    const task = (async () => {
      await sleep(Math.max(0, Date.parse(claimed.due_at) - now()));
      try {
        buffer.add(postedOf(claimed, await o.execute(targetOf(claimed), location)));
        counts.ran++;
      } catch (error) {
        // A defect of the executor: no result; the run is made again after its lease.
        o.log.error("probe run failed", { error: String(error) });
      } finally {
        inFlight--;
        slotFreed?.();
      }
    })();
    idle.add(task);
    task.finally(() => idle.delete(task));
  }

  async function claimLoop() {
    let pause = 1000;
    while (!stopping) {
      const room = Math.min(1000, o.concurrency - inFlight);
      if (room <= 0) {
        await new Promise<void>((r) => (slotFreed = r));
        slotFreed = null;
        continue;
      }
      const answer = await o.client.claim({ ...who, max: room }, claimAbort.signal);
      if (stopping) return;
      if (answer.ok) {
        reachable(true);
        pause = 1000;
        counts.claimed += answer.data.runs.length;
        for (const claimed of answer.data.runs) run(claimed, answer.data.location);
        continue;
      }
      if (answer.kind === "unreachable") reachable(false, answer.reason);
      else o.log.error("claim refused", { ...answer });
      await sleep(answer.kind === "unreachable" ? answer.retryAfterMs ?? pause : 10_000);
      pause = Math.min(pause * 2, 10_000);
    }
  }

  /** Posts one batch; true when the service answered for it (so more may go at once). */
  async function flushOnce(): Promise<boolean> {
    const dropped = buffer.expire();
    if (dropped > 0) o.log.warn("results dropped: older than the buffer keeps", { dropped });
    const batch = buffer.peek(MAX_RESULTS_BATCH);
    if (batch.length === 0) return false;
    const answer = await o.client.post({ ...who, results: batch });
    if (answer.ok) {
      reachable(true);
      counts.recorded += answer.data.recorded;
      counts.duplicate += answer.data.duplicate;
      counts.expired += answer.data.expired;
      buffer.remove(new Set(batch.map((r) => r.run_id)));
      return true;
    }
    if (answer.kind === "conflict") {
      // Runs the service says were never this location's: they never will be.
      counts.refused += answer.runIds.length;
      o.log.error("results refused: runs not claimed for this location", {
        count: answer.runIds.length,
      });
      buffer.remove(new Set(answer.runIds));
      return answer.runIds.length > 0;
    }
    if (answer.kind === "unreachable") reachable(false, answer.reason);
    else o.log.error("results post refused", { ...answer });
    return false;
  }

  async function flushLoop() {
    let pause = o.flushEveryMs ?? 200;
    // When stopping, the runs still in flight are waited for: their results are posted too.
    while (!stopping || buffer.length > 0 || inFlight > 0) {
      const more = await flushOnce();
      if (stopping && !more && inFlight === 0) return;
      pause = more
        ? 0
        : buffer.length > 0 && outage !== null
        ? Math.min(Math.max(pause * 2, 500), 5000)
        : o.flushEveryMs ?? 200;
      if (pause > 0) await sleep(pause);
    }
  }

  return {
    start() {
      loops.push(claimLoop(), flushLoop());
    },
    async stop(graceMs = 10_000) {
      stopping = true;
      claimAbort.abort();
      slotFreed?.();
      const deadline = sleep(graceMs);
      await Promise.race([Promise.all([...idle]), deadline]);
      await Promise.race([Promise.all(loops), deadline]);
    },
    counters: () => ({
      ...counts,
      dropped: buffer.dropped,
      buffered: buffer.length,
      inFlight,
    }),
  };
}
