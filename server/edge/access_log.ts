/**
 * The access log of requests that are not the keyed API's: 404s, health checks, the
 * documentation, status pages, badges, the dashboard, and requests without a valid key. Anyone can
 * send those as fast as the network allows, so they are never written one line each: they are
 * counted per route template, method and status, and one `requests` line per window (10 s by
 * default, `LOG_SUMMARY_SECONDS`) says how many there were. Route templates are the metrics'
 * labels (`/status/*`, `/badge/*`, `other`…), never the raw path, so the line's size is bounded
 * whatever callers send. Requests with a valid key keep their line each (the rate limit bounds
 * them).
 *
 * There is no timer: a window's line is written by the first request after it ends (any request,
 * keyed or not) and by `flush()` at shutdown, so an idle service writes nothing.
 *
 * @module
 */
import type { Logger } from "../base/log.ts";

/** The default window of the summary, in seconds (`LOG_SUMMARY_SECONDS`). */
export const DEFAULT_SUMMARY_SECONDS = 10;

/**
 * Distinct route/method/status triples one window counts by name; the rest are counted under
 * `other` (routes are bounded already; this bounds the line whatever comes next).
 */
export const MAX_SUMMARY_ENTRIES = 200;

/** One count of a `requests` line. */
export interface SummaryEntry {
  route: string;
  method: string;
  status: number;
  count: number;
}

export interface RequestSummary {
  /** Counts a request; writes the last window's line first if that window has ended. */
  count(route: string, method: string, status: number): void;
  /** Writes the window's line now if it ends (called on every request), without counting. */
  tick(): void;
  /** Writes the current window's line, if anything was counted (at shutdown). */
  flush(): void;
}

export function createRequestSummary(
  { log, windowSeconds = DEFAULT_SUMMARY_SECONDS, now = () => performance.now() }: {
    log: Logger;
    windowSeconds?: number;
    /** The clock, in milliseconds. */
    now?: () => number;
  },
): RequestSummary {
  const windowMs = windowSeconds * 1000;
  let started = now();
  let counts = new Map<string, SummaryEntry>();
  let total = 0;

  const flush = () => {
    const at = now();
    if (total > 0) {
      log.info("requests", {
        // What this line counts: requests without a valid key or outside the keyed API.
        scope: "unkeyed",
        window_s: Math.round((at - started) / 100) / 10,
        total,
        counts: [...counts.values()].sort((a, b) => b.count - a.count),
      });
    }
    started = at;
    counts = new Map();
    total = 0;
  };
  const tick = () => {
    if (now() - started >= windowMs) flush();
  };
  return {
    count(route, method, status) {
      tick();
      total++;
      let id = `${route} ${method} ${status}`;
      let entry = counts.get(id);
      if (!entry && counts.size >= MAX_SUMMARY_ENTRIES) {
        id = `other ${method} ${status}`;
        entry = counts.get(id);
        route = "other";
      }
      if (entry) entry.count++;
      else counts.set(id, { route, method, status, count: 1 });
    },
    tick,
    flush,
  };
}
