/**
 * The remote runner: a location's runner that reaches the service over HTTP(S) with
 * the location's token and never touches the database (docs/locations.md, "Remote runners").
 *
 * - **Claims**: one claim in flight at a time, for as many runs as there are free slots (at most
 *   1,000), long-polling (the service answers as soon as runs are due, or empty after 25 s).
 * - **Runs**: each claimed run starts at its due time, with the executor the built-in runners
 *   use (a worker thread, the same network policy and assertions), and its result joins the
 *   buffer. Runs already claimed go on while the service cannot be reached.
 * - **Outages**: the runner remembers the probes it was given (their latest claimed run and
 *   interval). While the service cannot be reached, it goes on running each of them on its grid
 *   (`offlineLoop`), from the first due time after its last contact with the service, under the
 *   same concurrency; those runs are named by the probe's last run id at the new due time, marked
 *   `.o` (`offlineRunId`), and the service records each once when they arrive
 *   (`server/runner/offline_runs.ts`). A run the service offers again for a slot already run
 *   during the outage is not run twice. A probe not offered again for two intervals and a minute
 *   while the service answers is forgotten.
 * - **Results**: posted in batches of up to 1,000 every 200 ms; kept until the service answered
 *   for them (recorded, duplicate or expired), or a 409 said a run was never this location's.
 *   While the service cannot be reached they wait in the buffer, bounded in number and age
 *   (`ResultBuffer`), and go as soon as it answers again, oldest first. A result posted twice
 *   (an answer lost on the way) is recorded once.
 *
 * @module
 */
import {
  type ClaimedRun,
  MAX_RESULTS_BATCH,
  offlineRunId,
  parseRunId,
  type PostedResult,
} from "@probe/shared";
import { gridAfter, offsetOf } from "../../domain/schedule.ts";
import { sleep } from "../../base/sleep.ts";
import type { Logger } from "../../base/log.ts";
import type { ProbeTarget, RunResult } from "../execute.ts";
import type { ServiceClient } from "./client.ts";
import { ResultBuffer } from "./buffer.ts";

export interface RemoteRunnerOptions {
  client: ServiceClient;
  /** Runs one probe for `location` (its name: the claims say it), as the built-in runners do. */
  execute: (target: ProbeTarget, location: string) => Promise<RunResult>;
  log: Logger;
  runner: string;
  version: string;
  /** The service's URL, for the log line that says what the runner serves. */
  serviceUrl?: string;
  concurrency: number;
  bufferMax: number;
  bufferMaxAgeMs: number;
  now?: () => number;
  /** How often results are posted while some wait. */
  flushEveryMs?: number;
  /** How often, during an outage, the runner looks for runs of the probes it knows that fall due. */
  offlineTickMs?: number;
}

export interface RemoteRunnerCounters {
  claimed: number;
  ran: number;
  /** Runs made while the service could not be reached (of `ran`). */
  offline: number;
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

/** What the runner's two loops share: its runs in flight, its buffer, its counts. */
interface Shared {
  o: RemoteRunnerOptions;
  now: () => number;
  buffer: ResultBuffer;
  counts: Omit<RemoteRunnerCounters, "dropped" | "buffered" | "inFlight">;
  who: { runner: string; version: string };
  inFlight: number;
  stopping: boolean;
  claimAbort: AbortController;
  /** Resolves the claim loop's wait for a free slot. */
  slotFreed: (() => void) | null;
  /** The runs under way (waiting for their due time or running). */
  idle: Set<Promise<void>>;
  /** When the service stopped answering (its last answer); null while it answers. */
  outage: number | null;
  /** Whether a claim has answered yet (its answer names the location served). */
  served: boolean;
  /** Whether a claim has given it runs yet. */
  given: boolean;
  /** When the service last answered. */
  contact: number;
  /** The probes this runner was given, by probe key (see the module's note, "Outages"). */
  known: Map<string, Known>;
}

/** A probe the runner runs: its latest claimed run, its location, and its last due time run. */
interface Known {
  claimed: ClaimedRun;
  key: string;
  location: string;
  lastDue: number;
  intervalMs: number;
}

/** Logs an outage once, when it begins, and once when it ends. */
function reachable(s: Shared, ok: boolean, reason?: string) {
  if (ok) s.contact = s.now();
  if (!ok && s.outage === null) {
    s.outage = s.contact;
    s.o.log.warn("service unreachable: runs go on, results wait", { reason });
  } else if (ok && s.outage !== null) {
    s.o.log.info("service reachable again", { after_seconds: (s.now() - s.outage) / 1000 });
    s.outage = null;
  }
}

/** Runs one claimed run at its due time; its result joins the buffer. */
function run(s: Shared, claimed: ClaimedRun, location: string) {
  s.inFlight++;
  const task = (async () => {
    await sleep(Math.max(0, Date.parse(claimed.due_at) - s.now()));
    try {
      s.buffer.add(postedOf(claimed, await s.o.execute(targetOf(claimed), location)));
      s.counts.ran++;
    } catch (error) {
      // A defect of the executor: no result; the run is made again after its lease.
      s.o.log.error("probe run failed", { error: String(error) });
    } finally {
      s.inFlight--;
      s.slotFreed?.();
    }
  })();
  s.idle.add(task);
  task.finally(() => s.idle.delete(task));
}

/** Claims runs for the free slots, one claim at a time, until the runner stops. */
async function claimLoop(s: Shared) {
  let pause = 1000;
  while (!s.stopping) {
    const room = Math.min(1000, s.o.concurrency - s.inFlight);
    if (room <= 0) {
      await new Promise<void>((r) => (s.slotFreed = r));
      s.slotFreed = null;
      continue;
    }
    // The first claim asks without waiting: its answer names the location, logged at once.
    const wait = s.served ? {} : { wait_seconds: 0 };
    const answer = await s.o.client.claim(
      { ...s.who, max: room, ...wait },
      s.claimAbort.signal,
    );
    if (s.stopping) return;
    if (answer.ok) {
      reachable(s, true);
      if (!s.given && (!s.served || answer.data.runs.length > 0)) serving(s, answer.data);
      pause = 1000;
      s.counts.claimed += answer.data.runs.length;
      for (const claimed of answer.data.runs) {
        if (remember(s, claimed, answer.data.location)) run(s, claimed, answer.data.location);
      }
      continue;
    }
    if (answer.kind === "unreachable") reachable(s, false, answer.reason);
    else s.o.log.error("claim refused", { ...answer });
    await sleep(answer.kind === "unreachable" ? answer.retryAfterMs ?? pause : 10_000);
    pause = Math.min(pause * 2, 10_000);
  }
}

/** The probes some claimed runs are of (a probe has one run per claim). */
const probesOf = (runs: ClaimedRun[]) =>
  new Set(runs.map((r) => parseRunId(r.run_id)?.key ?? r.run_id)).size;

/**
 * Says which location of which service the runner serves, after its first claim, with the
 * probes that claim gave it; when it gave none (none was due), says so again at the first runs.
 */
function serving(s: Shared, answer: { location: string; runs: ClaimedRun[] }) {
  const fields = { service: s.o.serviceUrl, location: answer.location };
  if (!s.served) s.o.log.info("serving location", { ...fields, probes: probesOf(answer.runs) });
  else s.o.log.info("first runs claimed", { ...fields, probes: probesOf(answer.runs) });
  s.served = true;
  s.given ||= answer.runs.length > 0;
}

/**
 * Notes a claimed run's probe as known; false when the runner already ran that slot (or a later
 * one) during an outage: then it is not run twice.
 */
function remember(s: Shared, claimed: ClaimedRun, location: string): boolean {
  const ref = parseRunId(claimed.run_id);
  if (!ref) return true;
  const known = s.known.get(ref.key);
  if (known && known.lastDue >= ref.due) return false;
  if (!known && s.known.size >= s.o.bufferMax) return true;
  s.known.set(ref.key, {
    claimed,
    key: ref.key,
    location,
    lastDue: ref.due,
    intervalMs: claimed.interval_seconds * 1000,
  });
  return true;
}

/**
 * During an outage, runs each known probe at its next due time on its grid, from the first one
 * after the service's last answer (an earlier slot may have gone to another runner of the
 * location while the service answered); while the service answers, forgets probes it no longer
 * offers.
 */
async function offlineLoop(s: Shared) {
  const tick = s.o.offlineTickMs ?? 1000;
  while (!s.stopping) {
    // Ends early when the runner stops (the claim's abort), so stopping does not wait a tick.
    await sleep(tick, s.claimAbort.signal);
    const t = s.now();
    for (const known of s.known.values()) {
      if (s.stopping) return;
      if (s.outage === null) {
        if (t - known.lastDue > 2 * (known.intervalMs || 0) + 60_000) s.known.delete(known.key);
        continue;
      }
      // A service too old to say a probe's interval: its probes wait for the link.
      if (s.inFlight >= s.o.concurrency || !(known.intervalMs > 0)) continue;
      // Its next slot fell due while the service still answered and was not given to this
      // runner: another runner of the location has the probe.
      if (known.lastDue + known.intervalMs <= s.outage) continue;
      const offset = offsetOf(known.key, known.intervalMs);
      // A runner that fell behind (or was paused) goes on from the latest slot, not in a burst.
      let due = gridAfter(Math.max(known.lastDue, t - known.intervalMs), offset, known.intervalMs);
      if (due <= s.outage) due = gridAfter(s.outage, offset, known.intervalMs);
      if (due > t + tick) continue;
      const id = offlineRunId(known.claimed.run_id, due);
      if (!id) continue;
      known.lastDue = due;
      s.counts.offline++;
      run(s, { ...known.claimed, run_id: id, due_at: new Date(due).toISOString() }, known.location);
    }
  }
}

/** Posts one batch; true when the service answered for it (so more may go at once). */
async function flushOnce(s: Shared): Promise<boolean> {
  const { buffer, counts, o } = s;
  const dropped = buffer.expire();
  if (dropped > 0) o.log.warn("results dropped: older than the buffer keeps", { dropped });
  const batch = buffer.peek(MAX_RESULTS_BATCH);
  if (batch.length === 0) return false;
  const answer = await o.client.post({ ...s.who, results: batch });
  if (answer.ok) {
    reachable(s, true);
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
  if (answer.kind === "unreachable") reachable(s, false, answer.reason);
  else o.log.error("results post refused", { ...answer });
  return false;
}

/** Posts what waits, every `flushEveryMs`, backing off while the service cannot be reached. */
async function flushLoop(s: Shared) {
  const every = s.o.flushEveryMs ?? 200;
  let pause = every;
  // When stopping, the runs still in flight are waited for: their results are posted too.
  while (!s.stopping || s.buffer.length > 0 || s.inFlight > 0) {
    const more = await flushOnce(s);
    if (s.stopping && !more && s.inFlight === 0) return;
    pause = more
      ? 0
      : s.buffer.length > 0 && s.outage !== null
      ? Math.min(Math.max(pause * 2, 500), 5000)
      : every;
    if (pause > 0) await sleep(pause);
  }
}

export function createRemoteRunner(o: RemoteRunnerOptions): RemoteRunner {
  const now = o.now ?? Date.now;
  const s: Shared = {
    o,
    now,
    buffer: new ResultBuffer(o.bufferMax, o.bufferMaxAgeMs, now),
    counts: {
      claimed: 0,
      ran: 0,
      offline: 0,
      recorded: 0,
      duplicate: 0,
      expired: 0,
      refused: 0,
    },
    who: { runner: o.runner, version: o.version },
    inFlight: 0,
    stopping: false,
    claimAbort: new AbortController(),
    slotFreed: null,
    idle: new Set(),
    outage: null,
    served: false,
    given: false,
    contact: now(),
    known: new Map(),
  };
  const loops: Promise<void>[] = [];
  return {
    start() {
      loops.push(claimLoop(s), flushLoop(s), offlineLoop(s));
    },
    async stop(graceMs = 10_000) {
      s.stopping = true;
      s.claimAbort.abort();
      s.slotFreed?.();
      const deadline = sleep(graceMs);
      await Promise.race([Promise.all([...s.idle]), deadline]);
      await Promise.race([Promise.all(loops), deadline]);
    },
    counters: () => ({
      ...s.counts,
      dropped: s.buffer.dropped,
      buffered: s.buffer.length,
      inFlight: s.inFlight,
    }),
  };
}
