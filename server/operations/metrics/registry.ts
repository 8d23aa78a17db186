/**
 * The metrics registry of one app or runner process: a `prom-client` `Registry` of its own (not
 * the library's global one, so that several apps in one process, as in tests, do not collide),
 * with the process's default metrics when asked for.
 *
 * @module
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { errorFields, type Logger } from "../../base/log.ts";

/**
 * Default metrics prom-client names `…_total` although they are gauges (the handles, requests
 * and resources active now, summed over their kinds); `promtool check metrics` rejects such
 * names, and the same figures are there by kind without the suffix.
 */
const MISNAMED_DEFAULTS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

/**
 * Default metrics prom-client reads from `/proc/self`, which Deno opens only to `--allow-all`
 * (`deno task start` grants less): without it they would read 0 (or be left out).
 */
const PROC_DEFAULTS = [
  "process_resident_memory_bytes",
  "process_virtual_memory_bytes",
  "process_heap_bytes",
  "process_open_fds",
  "process_max_fds",
];

/**
 * A new registry. `processMetrics` adds prom-client's default metrics (CPU, memory, event loop
 * lag, heap, GC, and file descriptors where `/proc/self` can be read): they start timers and
 * observers that are never stopped, so only long-lived processes (the server, the runner) ask
 * for them.
 */
export function createRegistry({ processMetrics = false }: { processMetrics?: boolean } = {}) {
  const registry = new Registry();
  if (processMetrics) {
    collectDefaultMetrics({ register: registry });
    for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
    if (!canReadProcSelf()) {
      for (const name of PROC_DEFAULTS) registry.removeSingleMetric(name);
      // The resident set size comes from the runtime instead.
      new Gauge({
        name: "process_resident_memory_bytes",
        help: "Resident memory size in bytes.",
        registers: [registry],
        collect() {
          this.set(Deno.memoryUsage().rss);
        },
      });
    }
  }
  return registry;
}

function canReadProcSelf(): boolean {
  try {
    Deno.readTextFileSync("/proc/self/status");
    return true;
  } catch {
    return false;
  }
}

/**
 * A counter whose values are kept elsewhere (monotonic figures such as a runner's lost runs):
 * read at each scrape.
 */
export function counterOf<L extends string>(
  registry: Registry,
  { name, help, labelNames = [], read }: {
    name: string;
    help: string;
    labelNames?: readonly L[];
    read: () => { labels?: Partial<Record<L, string>>; value: number }[];
  },
): Counter<L> {
  return new Counter<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels = {}, value } of read()) this.inc(labels, value);
    },
  });
}

/** A read for scrapes: shared by the series that ask for it at once; null when it failed. */
export type ScrapeRead<T> = () => Promise<T | null>;

/**
 * Makes reads for scrapes (`ScrapeRead`): one database query fills several series, and a failed
 * one leaves its series out (counted in `metrics_collect_failures_total` and logged) rather than
 * failing the whole scrape.
 */
export function scrapeReads(
  registry: Registry,
  log: Logger,
): <T>(collector: string, read: () => Promise<T>) => ScrapeRead<T> {
  const failures = new Counter({
    name: "metrics_collect_failures_total",
    help: "Scrapes that left series out because a database read failed, by what was read",
    labelNames: ["collector"],
    registers: [registry],
  });
  return <T>(collector: string, read: () => Promise<T>) => {
    let pending: Promise<T | null> | null = null;
    return () =>
      pending ??= read().catch((error) => {
        failures.inc({ collector });
        log.warn("metrics: reading the database failed", { collector, ...errorFields(error) });
        return null;
      }).finally(() => pending = null);
  };
}

/**
 * A gauge without labels whose value is `value` of what `read` gives at each scrape: 0 when it
 * gives nothing (prom-client shows a gauge without labels as 0 once reset).
 */
export function readGauge<T>(
  registry: Registry,
  name: string,
  help: string,
  read: () => Promise<T | null>,
  value: (read: T) => number,
): Gauge {
  return new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const got = await read();
      this.reset();
      if (got !== null) this.set(value(got));
    },
  });
}
