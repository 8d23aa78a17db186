/**
 * The probe runner's metrics: runs by outcome and how late they started (told by the runner as
 * runs end: `RunnerObserver`), runs in flight, runs lost, its lag and overload flag (its
 * counters), and the schedule's figures shared with the I'm alive report (`scheduleFigures`).
 *
 * @module
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { Db } from "../../storage/database.ts";
import { OUTCOMES } from "../../runner/execute.ts";
import { scheduleFigures } from "../../runner/figures.ts";
import { OVERLOAD_LAG_MS, scheduleLag } from "../../domain/schedule_lag.ts";
import type { Runner, RunnerObserver } from "../../runner/runner.ts";
import type { ThreadHeap } from "../../base/threads.ts";
import { counterOf, readGauge, type scrapeReads } from "./registry.ts";

/** How late runs start, in seconds: on time is under 10 ms; a minute late is a stalled runner. */
const SLIP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface RunnerMetrics {
  /** For `RunnerOptions.observer`. */
  observer: RunnerObserver;
  /** Reads the runner's counters at each scrape (runs in flight, runs lost). */
  watch(runner: Runner): void;
}

/**
 * Registers the runner's metrics. With `db`, the schedule's figures too: probes scheduled and
 * overdue, for every runner sharing the database (two counts, one query per scrape).
 */
export function runnerMetrics(
  registry: Registry,
  { db, reads }: { db?: Db; reads?: ReturnType<typeof scrapeReads> } = {},
): RunnerMetrics {
  const checks = new Counter({
    name: "runner_checks_total",
    help: "Probe runs made by this process's runner, by outcome",
    labelNames: ["outcome"],
    registers: [registry],
  });
  for (const outcome of OUTCOMES) checks.inc({ outcome }, 0);
  const slip = new Histogram({
    name: "runner_schedule_slip_seconds",
    help: "How late runs started after their due time",
    buckets: SLIP_BUCKETS,
    registers: [registry],
  });
  const runners: Runner[] = [];
  new Gauge({
    name: "runner_runs_in_flight",
    help: "Probe runs executing now",
    registers: [registry],
    collect() {
      this.set(runners.reduce((n, r) => n + r.counters().inFlight, 0));
    },
  });
  new Gauge({
    name: "runner_lag_seconds",
    help: "How late this process's runner starts probe runs now: how far behind the schedule it is",
    registers: [registry],
    collect() {
      this.set(runners.reduce((n, r) => Math.max(n, r.counters().lagMs), 0) / 1000);
    },
  });
  new Gauge({
    name: "runner_overloaded",
    help: `1 when this process's runner cannot keep up with the runs due (behind by ${
      OVERLOAD_LAG_MS / 1000
    } s or more)`,
    registers: [registry],
    collect() {
      this.set(runners.some((r) => r.counters().overloaded) ? 1 : 0);
    },
  });
  new Gauge({
    name: "runner_claim_window",
    help:
      "Most probe runs this process's runner holds claimed at once, sized from what it observes",
    registers: [registry],
    collect() {
      this.set(runners.reduce((n, r) => n + r.counters().window, 0));
    },
  });
  counterOf(registry, {
    name: "runner_runs_lost_total",
    help: "Runs not recorded: the lease had passed to another runner, or the probe was deleted",
    read: () => [{ value: runners.reduce((n, r) => n + r.counters().lost, 0) }],
  });
  counterOf(registry, {
    name: "runner_runs_deferred_total",
    help: "Due runs given back unstarted: their target host had its cap of runs in flight",
    read: () => [{ value: runners.reduce((n, r) => n + r.counters().deferred, 0) }],
  });
  if (db && reads) {
    // A failed read keeps the values of the last scrape.
    const figures = reads("schedule", () => scheduleFigures({ db }));
    new Gauge({
      name: "runner_probes_scheduled",
      help: "Probes of enabled projects on the schedule, for all runners",
      registers: [registry],
      async collect() {
        const f = await figures();
        if (f) this.set(f.scheduled);
      },
    });
    new Gauge({
      name: "runner_probes_overdue",
      help: "Probes whose run is more than a minute overdue and claimed by no runner",
      registers: [registry],
      async collect() {
        const f = await figures();
        if (f) this.set(f.overdue);
      },
    });
  }
  if (db && reads) {
    const lag = reads("schedule_lag", () => scheduleLag({ db }));
    new Gauge({
      name: "runner_schedule_lag_seconds",
      help: "Age of the oldest probe run due and claimed by no runner, for all runners (0: none)",
      registers: [registry],
      async collect() {
        const seconds = await lag();
        if (seconds !== null) this.set(seconds);
      },
    });
  }
  /** The heaps of the runners' probe threads, summed (a process has one runner). */
  const heaps = async (): Promise<ThreadHeap | null> => {
    const read = (await Promise.all(runners.map((r) => r.threadHeap?.() ?? null)))
      .filter((heap) => heap !== null);
    if (read.length === 0) return null;
    return {
      heapUsedBytes: read.reduce((sum, heap) => sum + heap.heapUsedBytes, 0),
      heapTotalBytes: read.reduce((sum, heap) => sum + heap.heapTotalBytes, 0),
    };
  };
  readGauge(
    registry,
    "runner_thread_heap_used_bytes",
    "The V8 heap in use in the thread this process's runner runs probes in",
    heaps,
    (heap) => heap.heapUsedBytes,
  );
  readGauge(
    registry,
    "runner_thread_heap_total_bytes",
    "The V8 heap committed in the thread this process's runner runs probes in",
    heaps,
    (heap) => heap.heapTotalBytes,
  );
  return {
    observer: {
      ran(outcome, slipMs) {
        checks.inc({ outcome });
        slip.observe(slipMs / 1000);
      },
    },
    watch(runner) {
      runners.push(runner);
    },
  };
}
