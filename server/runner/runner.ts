/**
 * The probe runner: claims due probes from the schedule, runs each at its due time with at most
 * `concurrency` runs at once, records the results in batches, and prunes old history.
 *
 * Time comes from an injectable clock (timers included), so tests drive it with fake timers;
 * `poll`, `idle` and `sync` let a test step the runner by hand instead of starting its loops.
 *
 * @module
 */
import { hostname } from "node:os";
import type { Db } from "../db/database.ts";
import { errorFields, type Logger } from "../log.ts";
import {
  executeProbe,
  type Outcome,
  type ProbeTarget,
  RETRY_PAUSE_MS,
  type RunResult,
} from "./execute.ts";
import type { NetworkPolicy, Resolver } from "../outbound/network_policy.ts";
import { pruneOnce, type PruneReport, purgeDeleted } from "./prune.ts";
import { OVERLOAD_LAG_MS } from "../domain/schedule_lag.ts";
import { nextDue, offsetOf } from "../domain/schedule.ts";
import {
  claimDue,
  type Claimed,
  type Completed,
  extendLeases,
  recordRuns,
  releaseLeases,
  syncSchedules,
} from "./store.ts";

/** The clock a runner reads and sets its timers on; `@sinonjs/fake-timers` clocks fit. */
export interface RunnerClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

export const systemClock: RunnerClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as number),
};

export interface RunnerOptions {
  db: Db;
  log: Logger;
  intervalMs: number;
  timeoutMs: number;
  concurrency: number;
  retentionDays: number;
  policy: NetworkPolicy;
  /** Names this runner in leases and results; unique per process by default. */
  id?: string;
  resolve?: Resolver;
  clock?: RunnerClock;
  /** Runs one probe; `executeProbe` under the policy by default. */
  execute?: (target: ProbeTarget) => Promise<RunResult>;
  /** Certificate authorities to trust instead of the system's (tests). */
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
  flushEveryMs?: number;
  flushBatch?: number;
  pruneEveryMs?: number;
  /** How often to look for deleted probes whose history is to be removed (`purgeDeleted`). */
  purgeEveryMs?: number;
  retryPauseMs?: number;
  /** Told of each run as it ends (`/metrics`: server/metrics/runner.ts). */
  observer?: RunnerObserver;
  /**
   * Runs in flight at once against one target host (`URL.host`: name and port); `concurrency`
   * (no cap of its own) unless given. `PROBE_HOST_CONCURRENCY` sets it (server/config.ts).
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
}

/**
 * How long a claim holds for a run whose timeout is `timeoutMs`: the run, its retry, and slack.
 * A runner renews the leases of what it still holds at half their length (`Runner.tick`).
 */
export function leaseFor(timeoutMs: number): number {
  return 2 * timeoutMs + 10_000;
}

/**
 * The claim window: the most runs a runner holds claimed and not over at once. It covers the
 * runs made per second lately (`rate`) for `coverMs` (what is claimed ahead, a poll or two, and
 * slack), at least twice the slots, but never more than the runner can start in half a lease
 * (`startWithinMs`): its slots over the mean run time, and its recording over the mean
 * recording time per run. So every run claimed starts before its lease would run out, and when
 * more is due than the runner can make, it holds about `coverMs` of what it makes, oldest due
 * first; the rest stays on the schedule for other runners.
 */
export function claimWindow(
  { rate, concurrency, coverMs, startWithinMs, runMs, recordMs, maxClaimed }: {
    /** Runs made per second lately. */
    rate: number;
    concurrency: number;
    coverMs: number;
    startWithinMs: number;
    /** Mean run time (ms); unknown (no run yet) as null. */
    runMs: number | null;
    /** Mean recording time per run (ms); unknown as null. */
    recordMs: number | null;
    maxClaimed: number;
  },
): number {
  const wanted = Math.max(2 * concurrency, rate * coverMs / 1000);
  const canRun = runMs === null ? Infinity : concurrency * startWithinMs / Math.max(runMs, 1);
  const canRecord = recordMs === null ? Infinity : startWithinMs / Math.max(recordMs, 0.001);
  return Math.max(1, Math.floor(Math.min(wanted, canRun, canRecord, maxClaimed)));
}

/** The host a run counts against for `hostConcurrency`: the URL's host (name and port). */
export function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : url;
}

export function createRunner(options: RunnerOptions): Runner {
  const {
    db,
    log,
    intervalMs,
    timeoutMs,
    concurrency,
    retentionDays,
  } = options;
  const clock = options.clock ?? systemClock;
  const id = options.id ?? `${hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const leaseMs = options.leaseMs ?? leaseFor(timeoutMs);
  // Often enough that a lease is renewed well before it runs out (at half of it).
  const tickMs = options.tickMs ?? Math.min(1000, leaseMs / 4);
  const overloadLagMs = options.overloadLagMs ?? OVERLOAD_LAG_MS;
  const warnEveryMs = options.warnEveryMs ?? 60_000;
  const claimBatch = options.claimBatch ?? 5000;
  const maxClaimedCeiling = options.maxClaimed ?? 100_000;
  const pollMs = options.pollMs ?? 250;
  const lookaheadMs = options.lookaheadMs ?? 1000;
  const syncEveryMs = options.syncEveryMs ?? 2000;
  const flushEveryMs = options.flushEveryMs ?? 200;
  const flushBatch = options.flushBatch ?? 500;
  const pruneEveryMs = options.pruneEveryMs ?? 10 * 60_000;
  const purgeEveryMs = options.purgeEveryMs ?? 5_000;
  const execute = options.execute ?? ((target: ProbeTarget) =>
    executeProbe(target, {
      policy: options.policy,
      resolve: options.resolve,
      timeoutMs,
      ca: options.ca,
      now: () => clock.now(),
      retryPauseMs: options.retryPauseMs ?? RETRY_PAUSE_MS,
    }));

  const hostCap = Math.max(1, options.hostConcurrency ?? concurrency);
  const deferMs = options.deferMs ?? timeoutMs;
  /** Probes overdue before this are spread over `restartSpreadMs` (see `claimDue`). */
  const bornAt = clock.now();
  const restartSpreadMs = options.restartSpreadMs ?? Math.min(intervalMs / 2, 300_000);

  const counters: Omit<RunnerCounters, "inFlight" | "window" | "lagMs" | "overloaded"> = {
    runs: 0,
    recorded: 0,
    skipped: 0,
    lost: 0,
    deferred: 0,
    overloadWarnings: 0,
    renewed: 0,
  };
  const observer = options.observer;
  /** Claimed and not yet over: waiting for the due time, queued, or running. */
  let active = 0;
  /**
   * At most this many claimed at once: runs in flight plus the next ones, claimed ahead. Sized
   * at each tick from what the runner observes (`claimWindow`); twice the slots to begin with.
   */
  let maxClaimed = Math.min(2 * concurrency, maxClaimedCeiling);
  /** What the window is sized from: runs ended lately, mean run and recording times. */
  const seen = {
    ended: 0,
    rate: 0,
    runMs: null as number | null,
    recordMs: null as number | null,
    /** Least slip of the runs started since the last tick (ms), or null. */
    startSlipMs: null as number | null,
    lagMs: 0,
    lastTick: clock.now(),
    /**
     * The last claim took all the window let it (or none was let): more may be due than this
     * runner holds, so a tick that starts nothing is not a sign that it has caught up.
     */
    full: false,
    /** When the last overload warning was written. */
    warnedAt: null as number | null,
  };
  /**
   * The leases this runner holds, by slot (`key@due`): claimed, running, or waiting to be
   * recorded. Each tick renews those past half their length, so no lease runs out while the
   * runner lives and holds the run: a slot is made at most once, and no run is dropped.
   */
  const leases = new Map<string, { key: string; until: number }>();
  const slotOf = (c: { key: string; due: number }) => `${c.key}@${c.due}`;
  const waiting = new Map<string, { timer: unknown; claimed: Claimed }>();
  /** Due, waiting for one of the `concurrency` slots or for a slot of their host. */
  let queued: { claimed: Claimed; host: string }[] = [];
  /** Per target host: runs in flight, and runs queued. */
  const hostRunning = new Map<string, number>();
  const hostQueued = new Map<string, number>();
  const running = new Set<Promise<void>>();
  /** Lease changes, sent in one statement per kind and tick (`changeLease`). */
  const leaseChanges = { defer: [] as string[], extend: [] as string[] };
  let buffer: Completed[] = [];
  let flushing: Promise<void> | null = null;
  let stopped = true;
  const timers = new Set<unknown>();
  const busy = new Set<Promise<unknown>>();
  /** Lease changes being written; `idle` and `stop` wait for them. */
  const leaseWrites = new Set<Promise<void>>();

  function complete(claimed: Claimed, result: RunResult | null, startedAt?: number) {
    const now = clock.now();
    if (startedAt !== undefined) {
      const ms = now - startedAt;
      seen.runMs = seen.runMs === null ? ms : seen.runMs + (ms - seen.runMs) * 0.05;
    }
    seen.ended++;
    if (result) {
      observer?.ran(result.outcome, Math.max(0, result.startedAt.getTime() - claimed.due));
    }
    buffer.push({
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
    active--;
    if (buffer.length >= flushBatch) void flush();
  }

  const bump = (counts: Map<string, number>, host: string, by: number) => {
    const n = (counts.get(host) ?? 0) + by;
    if (n === 0) counts.delete(host);
    else counts.set(host, n);
  };

  /**
   * A due run starts when a slot is free and its host has fewer than `hostCap` runs in flight.
   * Otherwise it queues, but a host may keep at most as many runs queued as its `hostCap` slots
   * start in half a lease (`hostQueueCap`; `hostCap` while its run time is unknown): past that
   * its runs are given back, unstarted, for `deferMs`. So a slow host holds at most `hostCap`
   * slots and about as many claims, whatever it answers, and never the claims (`maxClaimed`)
   * of the others; a fast one queues what its slots get through in time.
   * A run that waits in the queue, runs, or waits to be recorded keeps its lease: the runner
   * renews what it holds at each tick (`renewLeases`), so that no runner, this one included,
   * claims it again meanwhile.
   */
  function run(claimed: Claimed) {
    const host = hostOf(claimed.target.url);
    if ((hostRunning.get(host) ?? 0) >= hostCap) {
      if ((hostQueued.get(host) ?? 0) >= hostQueueCap(host)) return defer(claimed);
      bump(hostQueued, host, 1);
      queued.push({ claimed, host });
      return;
    }
    if (running.size >= concurrency) {
      bump(hostQueued, host, 1);
      queued.push({ claimed, host });
      return;
    }
    start(claimed, host);
  }

  /** Mean run time per host (ms), for `hostQueueCap`; forgotten past 10,000 hosts. */
  const hostRunMs = new Map<string, number>();
  function hostQueueCap(host: string) {
    const ms = hostRunMs.get(host);
    if (ms === undefined) return hostCap;
    return Math.max(hostCap, Math.floor(hostCap * (leaseMs / 2) / Math.max(ms, 1)));
  }
  function ranOn(host: string, ms: number) {
    const mean = hostRunMs.get(host);
    if (mean === undefined && hostRunMs.size >= 10_000) hostRunMs.clear();
    hostRunMs.set(host, mean === undefined ? ms : mean + (ms - mean) * 0.1);
  }

  function start(claimed: Claimed, host: string) {
    counters.runs++;
    bump(hostRunning, host, 1);
    const startedAt = clock.now();
    const slip = Math.max(0, startedAt - claimed.due);
    seen.startSlipMs = seen.startSlipMs === null ? slip : Math.min(seen.startSlipMs, slip);
    const p: Promise<void> = execute(claimed.target)
      .then((result) => complete(claimed, result, startedAt))
      .catch((error) => {
        // executeProbe returns failures as values; reaching here is a defect, not an outage.
        log.error("probe run failed", { probe_key: claimed.key, ...errorFields(error) });
        complete(claimed, null, startedAt);
      })
      .finally(() => {
        running.delete(p);
        bump(hostRunning, host, -1);
        ranOn(host, clock.now() - startedAt);
        startQueued();
      });
    running.add(p);
  }

  /** Starts queued runs, oldest first, while slots are free, skipping hosts at their cap. */
  function startQueued() {
    while (running.size < concurrency && queued.length > 0) {
      const i = queued.findIndex((q) => (hostRunning.get(q.host) ?? 0) < hostCap);
      if (i < 0) return;
      const [{ claimed, host }] = queued.splice(i, 1);
      bump(hostQueued, host, -1);
      // A run that waited so long that its lease could lapse before the next tick renews it
      // has it extended as it starts (most runs wait less: no statement for them).
      const lease = leases.get(slotOf(claimed));
      const now = clock.now();
      if (lease && lease.until - now <= leaseMs / 2 + tickMs) {
        lease.until = now + leaseMs;
        changeLease("extend", claimed.key);
      }
      start(claimed, host);
    }
  }

  /** Gives a due run back unstarted, claimable again in `deferMs`. */
  function defer(claimed: Claimed) {
    active--;
    leases.delete(slotOf(claimed));
    counters.deferred++;
    changeLease("defer", claimed.key);
  }

  /**
   * Gives a lease back until `deferMs` from now (`defer`), or extends it to `leaseMs` from now
   * (`extend`: a run that waited long starts; other leases held are renewed at each tick by
   * `renewLeases`). Batched: one statement per kind and tick. A failure leaves the lease as it
   * was: a run given back is claimable when it runs out.
   */
  function changeLease(kind: keyof typeof leaseChanges, key: string) {
    leaseChanges[kind].push(key);
    if (leaseChanges[kind].length > 1) return;
    const p = Promise.resolve().then(async () => {
      const keys = leaseChanges[kind];
      leaseChanges[kind] = [];
      const now = clock.now();
      try {
        if (kind === "defer") await releaseLeases(db, id, keys, now + deferMs);
        else await extendLeases(db, id, keys, now + leaseMs);
      } catch (error) {
        log.warn(`${kind === "defer" ? "giving back" : "extending"} leases failed`, {
          count: keys.length,
          ...errorFields(error),
        });
      }
    }).finally(() => leaseWrites.delete(p));
    leaseWrites.add(p);
  }

  function dispatch(claimed: Claimed) {
    active++;
    if (!claimed.enabled) {
      complete(claimed, null);
      return;
    }
    const delay = claimed.due - clock.now();
    if (delay <= 0) {
      run(claimed);
      return;
    }
    const timer = clock.setTimeout(() => {
      waiting.delete(claimed.key);
      run(claimed);
    }, delay);
    waiting.set(claimed.key, { timer, claimed });
  }

  async function poll(): Promise<number> {
    const now = clock.now();
    // Finished runs waiting to be recorded count against the window past one batch: when
    // recording falls behind, claiming slows down with it.
    const limit = Math.min(
      claimBatch,
      maxClaimed - active - Math.max(0, buffer.length - flushBatch),
    );
    seen.full = limit <= 0;
    if (limit <= 0) return 0;
    const claimed = await claimDue(db, {
      now,
      horizon: now + lookaheadMs,
      leaseUntil: now + leaseMs,
      runner: id,
      limit,
      spread: restartSpreadMs > 0
        ? { since: bornAt, spreadMs: restartSpreadMs, intervalMs }
        : undefined,
      defaults: { intervalMs, timeoutMs },
    });
    seen.full = claimed.length >= limit && limit < claimBatch;
    for (const c of claimed) {
      leases.set(slotOf(c), { key: c.key, until: now + leaseMs });
      dispatch(c);
    }
    return claimed.length;
  }

  /** Renews the leases past half their length (or all of them), in one statement. */
  async function renewLeases(now: number, all = false) {
    const due: { key: string; until: number }[] = [];
    for (const lease of leases.values()) {
      if (all || lease.until - now <= leaseMs / 2) due.push(lease);
    }
    if (due.length === 0) return;
    try {
      await extendLeases(db, id, [...new Set(due.map((l) => l.key))], now + leaseMs);
      for (const lease of due) lease.until = Math.max(lease.until, now + leaseMs);
      counters.renewed += due.length;
    } catch (error) {
      log.warn("renewing leases failed", { count: due.length, ...errorFields(error) });
    }
  }

  async function tick(): Promise<void> {
    const now = clock.now();
    await renewLeases(now);
    const elapsed = Math.max(1, now - seen.lastTick);
    seen.lastTick = now;
    const rate = seen.ended * 1000 / elapsed;
    seen.ended = 0;
    seen.rate = seen.rate === 0 ? rate : seen.rate + (rate - seen.rate) * 0.3;
    maxClaimed = claimWindow({
      rate: seen.rate,
      concurrency,
      coverMs: Math.max(2000, 2 * (lookaheadMs + 2 * pollMs)),
      startWithinMs: leaseMs / 2,
      runMs: seen.runMs,
      recordMs: seen.recordMs,
      maxClaimed: maxClaimedCeiling,
    });
    // How late runs start now: the wait of the oldest due run queued for a slot (claimed oldest
    // due first, the queue's front is the front of the schedule); with none queued, the least
    // slip of the runs started since the last tick; with none started either, while the window
    // is full (more may be due than this runner holds), the last figure plus the time since;
    // else nothing is late.
    // (With slots free, what is queued waits for its host's cap: a slow target, not overload.)
    const front = queued.length > 0 && running.size >= concurrency
      ? now - queued[0].claimed.due
      : null;
    seen.lagMs = Math.max(
      0,
      front ?? seen.startSlipMs ?? (seen.full && seen.lagMs > 0 ? seen.lagMs + elapsed : 0),
    );
    seen.startSlipMs = null;
    log.debug("runner tick", {
      window: maxClaimed,
      active,
      waiting: waiting.size,
      queued: queued.length,
      running: running.size,
      buffered: buffer.length,
      rate: Math.round(seen.rate),
      run_ms: seen.runMs === null ? null : Math.round(seen.runMs),
      record_ms: seen.recordMs === null ? null : Math.round(seen.recordMs * 1000) / 1000,
      lag_ms: seen.lagMs,
      leases: leases.size,
    });
    if (seen.lagMs >= overloadLagMs) warnOverloaded(now);
  }

  /** Says, at most once per `warnEveryMs`, that the runner cannot keep up, and what to do. */
  function warnOverloaded(now: number) {
    if (seen.warnedAt !== null && now - seen.warnedAt < warnEveryMs) return;
    seen.warnedAt = now;
    counters.overloadWarnings++;
    log.warn("runner overloaded: probe runs start late", {
      runner: id,
      behind_seconds: Math.round(seen.lagMs / 100) / 10,
      runs_per_second: Math.round(seen.rate),
      hint: "start another runner on the same database (deno task runner), or set a longer " +
        "PROBE_INTERVAL_SECONDS",
    });
  }

  function flush(): Promise<void> {
    if (flushing) return flushing.then(() => (buffer.length ? flush() : undefined));
    flushing = (async () => {
      while (buffer.length > 0) {
        const batch = buffer.slice(0, flushBatch);
        try {
          const began = clock.now();
          const r = await recordRuns(db, id, batch);
          // Per run, from batches big enough that a transaction's fixed cost does not swamp it
          // (a batch of one when little is due would say recording is slow).
          if (batch.length >= Math.min(flushBatch, 50)) {
            const perRun = (clock.now() - began) / batch.length;
            seen.recordMs = seen.recordMs === null
              ? perRun
              : seen.recordMs + (perRun - seen.recordMs) * 0.2;
          }
          buffer = buffer.slice(batch.length);
          for (const c of batch) leases.delete(slotOf(c));
          counters.recorded += r.recorded;
          counters.skipped += r.skipped;
          counters.lost += r.lost;
          if (r.lost > 0) {
            log.warn("runs not recorded: lease lost or probe deleted", {
              runner: id,
              count: r.lost,
            });
          }
        } catch (error) {
          log.error("recording runs failed", errorFields(error));
          // Keep them for the next flush, within bounds; leases run out and others retry.
          if (buffer.length > 20 * flushBatch) {
            for (const c of buffer.slice(0, buffer.length - 20 * flushBatch)) {
              leases.delete(slotOf(c));
            }
            buffer = buffer.slice(buffer.length - 20 * flushBatch);
          }
          return;
        }
      }
    })().finally(() => flushing = null);
    return flushing;
  }

  async function sync(): Promise<number> {
    const added = await syncSchedules(db, { now: clock.now(), intervalMs });
    if (added > 0) log.debug("probes scheduled", { count: added });
    return added;
  }

  function prune(): Promise<PruneReport> {
    return pruneOnce(db, { now: clock.now(), retentionDays, stopped: () => stopped });
  }

  async function idle(): Promise<void> {
    while (running.size > 0 || leaseWrites.size > 0) {
      await Promise.allSettled([...running, ...leaseWrites]);
    }
    await flush();
  }

  /** Runs `task` now and then every `everyMs` (or at once again when it asks to), until stop. */
  function every(name: string, everyMs: number, task: () => Promise<unknown>, firstMs = 0) {
    const tick = async () => {
      timers.delete(timer);
      if (stopped) return;
      let again = false;
      const p = task().then((r) => (again = r === true)).catch((error) =>
        log.error(`runner ${name} failed`, errorFields(error))
      );
      busy.add(p);
      await p;
      busy.delete(p);
      if (stopped) return;
      timer = clock.setTimeout(tick, again ? 0 : everyMs);
      timers.add(timer);
    };
    let timer = clock.setTimeout(tick, firstMs);
    timers.add(timer);
  }

  return {
    id,
    poll,
    tick,
    flush,
    sync,
    idle,
    prune,
    counters: () => ({
      ...counters,
      inFlight: running.size,
      window: maxClaimed,
      lagMs: seen.lagMs,
      overloaded: seen.lagMs >= overloadLagMs,
    }),
    start() {
      if (!stopped) return;
      stopped = false;
      log.info("runner started", { runner: id, interval_ms: intervalMs, concurrency });
      every("sync", syncEveryMs, sync);
      // A full claim means more may be due: claim again at once.
      every("poll", pollMs, async () => (await poll()) > 0 && active < maxClaimed);
      every("flush", flushEveryMs, flush);
      every("tick", tickMs, tick, tickMs);
      every("prune", pruneEveryMs, async () => {
        const r = await prune();
        if (r.results + r.rollups + r.probes + r.partitionsCreated + r.partitionsDropped > 0) {
          log.info("pruned", { ...r });
        }
      }, Math.min(pruneEveryMs, 30_000));
      // A deleted project's history goes within seconds rather than at the next prune.
      every("purge", purgeEveryMs, async () => {
        const r = await purgeDeleted(db, { stopped: () => stopped });
        if (r.probes > 0) log.info("purged deleted probes' history", { ...r });
      }, purgeEveryMs);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const timer of timers) clock.clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...busy]);
      const unstarted = [
        ...[...waiting.values()].map((w) => w.claimed),
        ...queued.map((q) => q.claimed),
      ];
      for (const { timer } of waiting.values()) clock.clearTimeout(timer);
      waiting.clear();
      queued = [];
      hostQueued.clear();
      active -= unstarted.length;
      for (const c of unstarted) leases.delete(slotOf(c));
      // The ticks are over: a whole lease for the runs in flight to end and be recorded in.
      await renewLeases(clock.now(), true);
      try {
        await releaseLeases(db, id, unstarted.map((c) => c.key));
      } catch (error) {
        log.warn("giving back claims failed; their leases will run out", errorFields(error));
      }
      await idle();
      log.info("runner stopped", { runner: id, ...counters });
    },
  };
}
