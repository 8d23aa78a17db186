/**
 * The run slots of a runner: at most `concurrency` runs in flight at once, and at most `hostCap`
 * against one target host, with the due runs that wait for a slot queued oldest first.
 *
 * A due run starts when a slot is free and its host has fewer than `hostCap` runs in flight.
 * Otherwise it queues, but a host may keep at most as many runs queued as its `hostCap` slots
 * start in half a lease (`hostCap` while its run time is unknown): past that its runs are given
 * back, unstarted (`defer`). So a slow host holds at most `hostCap` slots and about as many
 * claims, whatever it answers, and never the claims of the others; a fast one queues what its
 * slots get through in time.
 *
 * @module
 */
import { errorFields, type Logger } from "../base/log.ts";
import type { ProbeTarget, RunResult } from "./execute.ts";
import type { Clock } from "../base/clock.ts";
import type { Claimed } from "./store.ts";

/** The host a run counts against for `hostConcurrency`: the URL's host (name and port). */
export function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : url;
}

export interface RunSlotsOptions {
  log: Logger;
  clock: Clock;
  concurrency: number;
  /** Runs in flight at once against one host. */
  hostCap: number;
  /** A lease's length: a host queues what its slots start in half of it. */
  leaseMs: number;
  execute(target: ProbeTarget): Promise<RunResult>;
  /** A run is starting (`counters.runs`, slip); `slipMs` is how late after its due time. */
  started(claimed: Claimed, slipMs: number): void;
  /** A queued run is about to start, after waiting (the lease keeper's `starting`). */
  unqueued(claimed: Claimed): void;
  /** A run ended (`result` null: it failed with a defect, logged). */
  ended(claimed: Claimed, result: RunResult | null, startedAt: number): void;
  /** Gives a due run back unstarted: its host has its cap in flight and queued. */
  defer(claimed: Claimed): void;
}

export interface RunSlots {
  /** Runs a claimed run at its due time (`run`); at once when it is due already. */
  runAtDue(claimed: Claimed): void;
  /** Starts a due run, queues it, or gives it back (see the module's note). */
  run(claimed: Claimed): void;
  /** Runs claimed and waiting for their due time. */
  readonly waiting: number;
  /** Runs in flight now; `idle` and `stop` wait for them. */
  readonly running: ReadonlySet<Promise<void>>;
  /** Runs queued now, oldest due first. */
  readonly queued: number;
  /** The due time of the oldest run queued, or null. */
  oldestQueuedDue(): number | null;
  /**
   * The runner stops: cancels the runs waiting for their due time, empties the queue, and
   * returns them (waiting first, then queued), unstarted.
   */
  drain(): Claimed[];
}

/** The run slots of one runner (see the module's note). */
export function createRunSlots(options: RunSlotsOptions): RunSlots {
  const { log, clock, concurrency, hostCap, leaseMs, execute } = options;
  const now = () => clock.now();
  /** Claimed, waiting for their due time. */
  const waiting = new Map<string, { timer: unknown; claimed: Claimed }>();
  /** Due, waiting for one of the `concurrency` slots or for a slot of their host. */
  let queued: { claimed: Claimed; host: string }[] = [];
  /** Per target host: runs in flight, and runs queued. */
  const hostRunning = new Map<string, number>();
  const hostQueued = new Map<string, number>();
  const running = new Set<Promise<void>>();
  /** Mean run time per host (ms), for `hostQueueCap`; forgotten past 10,000 hosts. */
  const hostRunMs = new Map<string, number>();

  const bump = (counts: Map<string, number>, host: string, by: number) => {
    const n = (counts.get(host) ?? 0) + by;
    if (n === 0) counts.delete(host);
    else counts.set(host, n);
  };

  function runAtDue(claimed: Claimed) {
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

  function run(claimed: Claimed) {
    const host = hostOf(claimed.target.url);
    if ((hostRunning.get(host) ?? 0) >= hostCap) {
      if ((hostQueued.get(host) ?? 0) >= hostQueueCap(host)) return options.defer(claimed);
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
    bump(hostRunning, host, 1);
    const startedAt = now();
    options.started(claimed, Math.max(0, startedAt - claimed.due));
    const p: Promise<void> = execute(claimed.target)
      .then((result) => options.ended(claimed, result, startedAt))
      .catch((error) => {
        // executeProbe returns failures as values; reaching here is a defect, not an outage.
        log.error("probe run failed", { probe_key: claimed.key, ...errorFields(error) });
        options.ended(claimed, null, startedAt);
      })
      .finally(() => {
        running.delete(p);
        bump(hostRunning, host, -1);
        ranOn(host, now() - startedAt);
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
      options.unqueued(claimed);
      start(claimed, host);
    }
  }

  return {
    runAtDue,
    run,
    running,
    get waiting() {
      return waiting.size;
    },
    get queued() {
      return queued.length;
    },
    oldestQueuedDue: () => queued.length > 0 ? queued[0].claimed.due : null,
    drain() {
      const unstarted = [
        ...[...waiting.values()].map((w) => w.claimed),
        ...queued.map((q) => q.claimed),
      ];
      for (const { timer } of waiting.values()) clock.clearTimeout(timer);
      waiting.clear();
      queued = [];
      hostQueued.clear();
      return unstarted;
    },
  };
}
