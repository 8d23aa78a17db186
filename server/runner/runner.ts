/**
 * The probe runner: claims due probes from the schedule, runs each at its due time with at most
 * `concurrency` runs at once, records the results in batches, and prunes old history.
 *
 * Time comes from an injectable clock (timers included), so tests drive it with fake timers;
 * `poll`, `idle` and `sync` let a test step the runner by hand instead of starting its loops.
 *
 * `createRunner` wires named pieces, each readable and testable alone: the lease keeper
 * (leases.ts), the run slots and per-host queue (slots.ts), the recording buffer (recorder.ts),
 * the claim window (window.ts), the lag and overload warning (lag.ts), and the loops (loops.ts).
 *
 * @module
 */
import { hostname } from "node:os";
import { type Db, withBudget } from "../storage/database.ts";
import { errorFields, type Logger } from "../base/log.ts";
import {
  executeProbe,
  type Outcome,
  type ProbeTarget,
  RETRY_PAUSE_MS,
  type RunResult,
} from "./execute.ts";
import type { NetworkPolicy, Resolver } from "../base/outbound/network_policy.ts";
import type { ThreadHeap } from "../base/threads.ts";
import { pruneOnce, type PruneReport, purgeDeleted } from "./prune.ts";
import { OVERLOAD_LAG_MS } from "../domain/schedule_lag.ts";
import { nextDue, offsetOf } from "../domain/schedule.ts";
import { claimDue, type Claimed, type Completed, releaseLeases } from "./store.ts";
import { createScheduleSync, type ScheduleSync } from "./schedule_sync.ts";
import { createLeaseKeeper, type LeaseKeeper } from "./leases.ts";
import { createRunSlots, type RunSlots } from "./slots.ts";
import { createRecorder, type Recorder } from "./recorder.ts";
import { createLagMeter, type LagMeter } from "./lag.ts";
import { type ClaimWindow, createWindow } from "./window.ts";
import { type Clock, systemClock } from "../base/clock.ts";
import { createLoops, type Loops } from "./loops.ts";
import { LOCAL, runnerSeen } from "../domain/locations.ts";
import { sweepStale } from "../alerting/verdicts.ts";
import type { Verdicts } from "./store.ts";
import { SERVICE_VERSION } from "../base/version.ts";
import { probeUserAgent } from "./user_agent.ts";
import { DEFAULT_LOCAL_LOCATION } from "@probe/shared";

export { claimWindow } from "./window.ts";
export { hostOf } from "./slots.ts";
export type { Clock } from "../base/clock.ts";

/**
 * How often a runner records the runs that ended (ms), unless a batch fills first. A second
 * keeps a result out of reads and states for at most that long after its run, and gives a few
 * hundred probes a minute batches a fifth as many: with 1,000 probes at 60 s on the embedded
 * database its thread spent 38 % less CPU than at 200 ms (bench:memory's thread times).
 */
export const FLUSH_EVERY_MS = 1_000;

export interface RunnerOptions {
  db: Db;
  /** The built-in location's name (`RUNNER_LOCATION`): messages name it; `local` by default. */
  localLocation?: string;
  log: Logger;
  intervalMs: number;
  timeoutMs: number;
  concurrency: number;
  retentionDays: number;
  /** Days the audit log keeps an entry; `DEFAULT_AUDIT_RETENTION_DAYS` unless given. */
  auditRetentionDays?: number;
  policy: NetworkPolicy;
  /** Names this runner in leases and results; unique per process by default. */
  id?: string;
  resolve?: Resolver;
  clock?: Clock;
  /** Runs one probe; `executeProbe` under the policy by default. */
  execute?: (target: ProbeTarget) => Promise<RunResult>;
  /** The authorities `tls://` probes trust: `PROBE_CA_FILE`'s with the system's; the system's unset. */
  ca?: string;
  /** How long a claim holds; `leaseFor(timeoutMs)` unless given. Renewed while the run lasts. */
  leaseMs?: number;
  /** How often to look for due probes. */
  pollMs?: number;
  /** How far ahead to claim, so that runs start on time rather than at the next poll. */
  lookaheadMs?: number;
  /**
   * Most runs claimed and not over at once, whatever the window sizing asks for
   * (`claimWindow`); 100,000 unless given.
   */
  maxClaimed?: number;
  /** Most runs one claim statement takes; more are claimed by the next statement at once. */
  claimBatch?: number;
  /**
   * How often the runner renews the leases of what it holds, resizes its claim window, and
   * measures how far behind it is (`RunnerCounters.lagMs`); every second unless given.
   */
  tickMs?: number;
  /** Behind by this much or more, the runner counts as overloaded; 5 s unless given. */
  overloadLagMs?: number;
  /** At most one overload warning in the log per this long; a minute unless given. */
  warnEveryMs?: number;
  /** How often to give new probes a schedule row. */
  syncEveryMs?: number;
  /**
   * How often the runs that ended are recorded, unless {@link flushBatch} of them are waiting
   * first; {@link FLUSH_EVERY_MS} unless given.
   */
  flushEveryMs?: number;
  /** Runs recorded in one transaction at most, and recorded at once when that many wait. */
  flushBatch?: number;
  pruneEveryMs?: number;
  /** How often to look for deleted probes whose history is to be removed (`purgeDeleted`). */
  purgeEveryMs?: number;
  retryPauseMs?: number;
  /** Told of each run as it ends (`/metrics`: server/operations/metrics/runner.ts). */
  observer?: RunnerObserver;
  /**
   * Runs in flight at once against one target host (`URL.host`: name and port); `concurrency`
   * (no cap of its own) unless given. `PROBE_HOST_CONCURRENCY` sets it (server/base/config.ts).
   */
  hostConcurrency?: number;
  /**
   * How long a run given back for its host's cap stays unclaimable (its lease is set that far
   * ahead, with no runner named); `timeoutMs` unless given: about when a slot of that host frees.
   */
  deferMs?: number;
  /**
   * Runs already overdue when this runner was created (a restart after an outage) start spread
   * over this long, each at a fixed point of it from its key, instead of all at once; half the
   * interval, at most 5 minutes, unless given. 0 turns the spread off.
   */
  restartSpreadMs?: number;
}

/** What a runner tells as it goes, for metrics. */
export interface RunnerObserver {
  /** A run ended: its outcome, and how late it started after its due time (ms, 0 or more). */
  ran(outcome: Outcome, slipMs: number): void;
}

export interface RunnerCounters {
  /** Runs made (and handed over for recording). */
  runs: number;
  recorded: number;
  /** Due runs of probes in disabled projects, passed over. */
  skipped: number;
  /** Runs not recorded: the lease had passed to another runner, or the probe was deleted. */
  lost: number;
  /** Runs executing now (not those claimed and waiting for their due time or a slot). */
  inFlight: number;
  /** Due runs given back unstarted because their host had its cap in flight and queued. */
  deferred: number;
  /** Most runs claimed and not over at once now: the claim window (`claimWindow`). */
  window: number;
  /** How late runs start now (ms): how far behind the schedule this runner is. */
  lagMs: number;
  /** Behind by `overloadLagMs` or more: the runner cannot keep up with what is due. */
  overloaded: boolean;
  /** Overload warnings written to the log (at most one per `warnEveryMs`). */
  overloadWarnings: number;
  /** Lease renewals of runs held past half their lease (claimed, running or being recorded). */
  renewed: number;
}

export interface Runner {
  readonly id: string;
  /** Starts the loops: sync, poll, flush, prune. */
  start(): void;
  /** Stops claiming, gives back unstarted claims, lets runs in flight finish and records them. */
  stop(): Promise<void>;
  /** One round of claiming; returns how many runs were claimed. */
  poll(): Promise<number>;
  /**
   * One tick of the runner's upkeep (each `tickMs` once started): renews the leases it holds
   * that are past half their length, resizes the claim window, measures the lag, and warns
   * when overloaded.
   */
  tick(): Promise<void>;
  /** Gives new probes their schedule rows; returns how many. */
  sync(): Promise<number>;
  /** Records the runs that have finished (and waits for a recording under way). */
  flush(): Promise<void>;
  /** Resolves when every run started has finished and been recorded. */
  idle(): Promise<void>;
  prune(): Promise<PruneReport>;
  counters(): RunnerCounters;
  /** The heap of the thread its probes run in (`worker_executor.ts`); absent when they run here. */
  threadHeap?(): Promise<ThreadHeap | null>;
}

/**
 * How long a claim holds for a run whose timeout is `timeoutMs`: the run, its retry, and slack.
 * A runner renews the leases of what it still holds at half their length (`Runner.tick`).
 */
export function leaseFor(timeoutMs: number): number {
  return 2 * timeoutMs + 10_000;
}

/** A runner's options with their defaults filled in. */
function settingsOf(options: RunnerOptions) {
  const { intervalMs, timeoutMs, concurrency } = options;
  const clock = options.clock ?? systemClock;
  const leaseMs = options.leaseMs ?? leaseFor(timeoutMs);
  return {
    clock,
    id: options.id ?? `${hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`,
    leaseMs,
    // Often enough that a lease is renewed well before it runs out (at half of it).
    tickMs: options.tickMs ?? Math.min(1000, leaseMs / 4),
    overloadLagMs: options.overloadLagMs ?? OVERLOAD_LAG_MS,
    warnEveryMs: options.warnEveryMs ?? 60_000,
    claimBatch: options.claimBatch ?? 5000,
    maxClaimed: options.maxClaimed ?? 100_000,
    pollMs: options.pollMs ?? 250,
    lookaheadMs: options.lookaheadMs ?? 1000,
    syncEveryMs: options.syncEveryMs ?? 2000,
    flushEveryMs: options.flushEveryMs ?? FLUSH_EVERY_MS,
    flushBatch: options.flushBatch ?? 500,
    pruneEveryMs: options.pruneEveryMs ?? 10 * 60_000,
    purgeEveryMs: options.purgeEveryMs ?? 5_000,
    execute: options.execute ?? ((target: ProbeTarget) =>
      executeProbe(target, {
        policy: options.policy,
        resolve: options.resolve,
        timeoutMs,
        userAgent: probeUserAgent(DEFAULT_LOCAL_LOCATION),
        ca: options.ca,
        now: () => clock.now(),
        retryPauseMs: options.retryPauseMs ?? RETRY_PAUSE_MS,
      })),
    hostCap: Math.max(1, options.hostConcurrency ?? concurrency),
    deferMs: options.deferMs ?? timeoutMs,
    /** Probes overdue before this are spread over `restartSpreadMs` (see `claimDue`). */
    bornAt: clock.now(),
    restartSpreadMs: options.restartSpreadMs ?? Math.min(intervalMs / 2, 300_000),
  };
}

type Settings = ReturnType<typeof settingsOf>;

/**
 * Whether a run was already due when this runner started: late because no runner ran, not
 * because this one cannot keep up. Such runs are spread over the restart's window (`claimDue`).
 */
const overdueAtStart = (s: Settings, due: number) => due < s.bornAt;

/**
 * From when a run's wait counts as the runner's lag: its due time, or, for a run overdue at
 * start, the end of the restart's window (until then it waits by design).
 */
const lagCountsFrom = (s: Settings, due: number) =>
  overdueAtStart(s, due) ? s.bornAt + s.restartSpreadMs : due;

export function createRunner(options: RunnerOptions): Runner {
  const { db, log, intervalMs, concurrency, retentionDays } = options;
  const s = settingsOf(options);
  const { clock, id, leaseMs, flushBatch, deferMs, tickMs, overloadLagMs, warnEveryMs } = s;
  const now = () => clock.now();
  const schedules = createScheduleSync(db, { intervalMs });
  const counters: Counted = {
    runs: 0,
    recorded: 0,
    skipped: 0,
    lost: 0,
    deferred: 0,
    overloadWarnings: 0,
    renewed: 0,
  };
  /** Runs claimed and not over; when the last tick was; whether the last claim took its limit. */
  const state = { active: 0, lastTick: clock.now(), claimFull: false };
  const leases = createLeaseKeeper({ db, log, runner: id, now, leaseMs, deferMs, tickMs });
  const released = (c: Completed) => leases.drop(c);
  const verdicts = {
    localName: options.localLocation ?? DEFAULT_LOCAL_LOCATION,
    intervalMs: options.intervalMs,
  };
  const recorder = createRecorder({
    db,
    log,
    runner: id,
    now,
    flushBatch,
    counters,
    released,
    verdicts,
  });
  const sizer = createWindow({
    concurrency,
    maxClaimed: s.maxClaimed,
    coverMs: Math.max(2000, 2 * (s.lookaheadMs + 2 * s.pollMs)),
    startWithinMs: leaseMs / 2,
  });
  const lag = createLagMeter({ log, runner: id, overloadLagMs, warnEveryMs, counters });
  const loops = createLoops(clock, log);
  const slots = createRunSlots({
    log,
    clock,
    concurrency,
    hostCap: s.hostCap,
    leaseMs,
    execute: s.execute,
    started(claimed, slipMs) {
      counters.runs++;
      // The lag leaves out a run overdue at start (see `tick` for the queued ones).
      if (!overdueAtStart(s, claimed.due)) lag.started(slipMs);
    },
    // A run that waited so long that its lease could lapse before the next tick renews it has
    // it extended as it starts. A run queued, running, or waiting to be recorded keeps its lease.
    unqueued: (c) => leases.starting(c),
    ended: (claimed, result, startedAt) => complete(parts, claimed, result, startedAt),
    defer(c) {
      state.active--;
      leases.drop(c);
      counters.deferred++;
      leases.change("defer", c.key);
    },
  });
  const parts: Parts = { options, s, counters, state, leases, recorder, sizer, lag, slots };

  const runner: Runner = {
    id,
    poll: () => pollOnce(parts),
    tick: () => tickOnce(parts),
    flush: recorder.flush,
    sync: () => syncOnce(schedules, log, now()),
    idle: () => idleOnce(parts),
    prune: () =>
      pruneOnce(db, {
        now: now(),
        retentionDays,
        auditRetentionDays: options.auditRetentionDays,
        stopped: () => loops.stopped,
      }),
    counters: () => ({
      ...counters,
      inFlight: slots.running.size,
      window: sizer.size,
      lagMs: lag.lagMs,
      overloaded: lag.overloaded,
    }),
    start() {
      if (!loops.start()) return;
      log.info("runner started", { runner: id, interval_ms: intervalMs, concurrency });
      startLoops(loops, runner, {
        ...s,
        db,
        log,
        verdicts,
        again: () => state.claimFull && state.active < sizer.size,
      });
    },
    async stop() {
      if (await loops.stop()) await stopOnce(parts);
    },
  };
  return runner;
}

/** The counters a runner keeps (the others are read from its pieces). */
type Counted = Omit<RunnerCounters, "inFlight" | "window" | "lagMs" | "overloaded">;

/** A runner's pieces, wired by `createRunner`, for the steps below. */
interface Parts {
  options: RunnerOptions;
  s: Settings;
  counters: Counted;
  /** `active`: claimed and not yet over (waiting for the due time, queued, or running). */
  state: { active: number; lastTick: number; claimFull: boolean };
  leases: LeaseKeeper;
  recorder: Recorder;
  sizer: ClaimWindow;
  lag: LagMeter;
  slots: RunSlots;
}

/** A claimed run is over (`result` null: not run, or failed with a defect): buffer it. */
function complete(
  { s, state, sizer, recorder, options: { observer } }: Parts,
  claimed: Claimed,
  result: RunResult | null,
  startedAt?: number,
) {
  const now = s.clock.now();
  sizer.ended(startedAt === undefined ? undefined : now - startedAt);
  if (result) {
    observer?.ran(result.outcome, Math.max(0, result.startedAt.getTime() - claimed.due));
  }
  recorder.add({
    key: claimed.key,
    due: claimed.due,
    result,
    inMaintenance: claimed.inMaintenance,
    nextDue: nextDue({
      due: claimed.due,
      now,
      offsetMs: offsetOf(claimed.key, claimed.intervalMs),
      intervalMs: claimed.intervalMs,
    }),
  });
  state.active--;
  if (recorder.length >= s.flushBatch) void recorder.flush();
}

/** One round of claiming (`Runner.poll`). */
async function pollOnce(parts: Parts): Promise<number> {
  const { options: { db, intervalMs, timeoutMs }, s, state, leases, recorder, sizer, lag } = parts;
  const now = s.clock.now();
  // Finished runs waiting to be recorded count against the window past one batch: when
  // recording falls behind, claiming slows down with it.
  const limit = Math.min(
    s.claimBatch,
    sizer.size - state.active - Math.max(0, recorder.length - s.flushBatch),
  );
  lag.full = limit <= 0;
  if (limit <= 0) return 0;
  const claimed = await claimDue(db, {
    now,
    horizon: now + s.lookaheadMs,
    leaseUntil: now + s.leaseMs,
    runner: s.id,
    limit,
    spread: s.restartSpreadMs > 0
      ? { since: s.bornAt, spreadMs: s.restartSpreadMs, intervalMs }
      : undefined,
    defaults: { intervalMs, timeoutMs },
  });
  state.claimFull = claimed.length >= limit;
  lag.full = state.claimFull && limit < s.claimBatch;
  for (const c of claimed) {
    leases.hold(c, now);
    state.active++;
    if (c.enabled) parts.slots.runAtDue(c);
    else complete(parts, c, null);
  }
  return claimed.length;
}

/** One tick of upkeep (`Runner.tick`). */
async function tickOnce(
  { options: { log, concurrency }, s, counters, state, leases, recorder, sizer, lag, slots }: Parts,
): Promise<void> {
  const now = s.clock.now();
  const renewed = await leases.renew(now);
  counters.renewed += renewed;
  const elapsed = Math.max(1, now - state.lastTick);
  state.lastTick = now;
  sizer.resize(elapsed, recorder.recordMs);
  // (With slots free, what is queued waits for its host's cap: a slow target, not overload.)
  const oldest = slots.oldestQueuedDue();
  const front = oldest === null ? null : now - lagCountsFrom(s, oldest);
  lag.measure(elapsed, front !== null && slots.running.size >= concurrency ? front : null);
  log.debug("runner tick", {
    window: sizer.size,
    active: state.active,
    waiting: slots.waiting,
    queued: slots.queued,
    running: slots.running.size,
    buffered: recorder.length,
    rate: Math.round(sizer.rate),
    run_ms: sizer.runMs === null ? null : Math.round(sizer.runMs),
    record_ms: recorder.recordMs === null ? null : Math.round(recorder.recordMs * 1000) / 1000,
    lag_ms: lag.lagMs,
    leases: leases.size,
  });
  lag.warnIfOverloaded(now, sizer.rate);
}

/** Resolves when every run started has finished and been recorded (`Runner.idle`). */
async function idleOnce({ slots, leases, recorder }: Parts): Promise<void> {
  while (slots.running.size > 0 || leases.writes.size > 0) {
    await Promise.allSettled([...slots.running, ...leases.writes]);
  }
  await recorder.flush();
}

/** After the loops stopped: gives back unstarted claims, lets runs in flight end and records them. */
async function stopOnce(parts: Parts): Promise<void> {
  const { options: { db, log }, s, counters, state, leases, slots } = parts;
  const unstarted = slots.drain();
  state.active -= unstarted.length;
  for (const c of unstarted) leases.drop(c);
  // The ticks are over: a whole lease for the runs in flight to end and be recorded in.
  const renewed = await leases.renew(s.clock.now(), true);
  counters.renewed += renewed;
  try {
    await releaseLeases(db, s.id, unstarted.map((c) => c.key));
  } catch (error) {
    log.warn("giving back claims failed; their leases will run out", errorFields(error));
  }
  await idleOnce(parts);
  log.info("runner stopped", { runner: s.id, ...counters });
}

/** Gives new probes their schedule rows; returns how many. */
async function syncOnce(schedules: ScheduleSync, log: Logger, now: number): Promise<number> {
  const added = await schedules.sync(now);
  if (added > 0) log.debug("probes scheduled", { count: added });
  return added;
}

/** Starts a runner's loops: sync, poll, flush, tick, heartbeat, prune, purge. */
function startLoops(
  loops: Loops,
  runner: Runner,
  s: Settings & {
    db: Db;
    log: Logger;
    verdicts: Verdicts;
    /**
     * The last claim took all it was allowed, so more may be due, and the window has room for
     * more: claim again at once rather than at the next poll.
     */
    again: () => boolean;
  },
) {
  const { every } = loops;
  every("sync", s.syncEveryMs, runner.sync);
  // A full claim means more may be due: claim again at once.
  every("poll", s.pollMs, async () => (await runner.poll()) > 0 && s.again());
  every("flush", s.flushEveryMs, runner.flush);
  every("tick", s.tickMs, runner.tick, s.tickMs);
  every("prune", s.pruneEveryMs, async () => {
    const r = await runner.prune();
    if (
      r.results + r.rollups + r.probes + r.partitionsCreated + r.partitionsDropped + r.audit > 0
    ) {
      s.log.info("pruned", { ...r });
    }
  }, Math.min(s.pruneEveryMs, 30_000));
  // Probes whose location went stale (no result for 3 intervals) are decided again.
  every(
    "verdicts",
    5_000,
    () => sweepStale(withBudget(s.db, "runner"), { ...s.verdicts, now: new Date(s.clock.now()) }),
  );
  // Seen by the locations' read (`GET /locations`: runners, last seen, version).
  every(
    "heartbeat",
    15_000,
    () => runnerSeen(withBudget(s.db, "runner"), LOCAL, { runner: s.id, version: SERVICE_VERSION }),
  );
  // A deleted project's history goes within seconds rather than at the next prune.
  every("purge", s.purgeEveryMs, async () => {
    const r = await purgeDeleted(s.db, { stopped: () => loops.stopped });
    if (r.probes > 0) s.log.info("purged deleted probes' history", { ...r });
  }, s.purgeEveryMs);
}
