import { z } from "zod";
import { failedCheck } from "./expect.ts";
import { instant } from "./instant.ts";
import { probeState } from "./probe.ts";
import { locationFilter, nameInPath } from "./project.ts";

/** What a run came to: `up` and `degraded` count towards uptime. */
export const OUTCOMES = ["up", "degraded", "down", "blocked"] as const;
export const outcome = z.enum(OUTCOMES);
export type Outcome = z.infer<typeof outcome>;

export const STATS_WINDOWS = ["1h", "24h", "7d", "30d", "90d"] as const;
export const statsWindow = z.enum(STATS_WINDOWS);
export type StatsWindow = z.infer<typeof statsWindow>;

/** Each window's length in milliseconds. */
export const STATS_WINDOW_MS: Record<StatsWindow, number> = {
  "1h": 3_600_000,
  "24h": 86_400_000,
  "7d": 7 * 86_400_000,
  "30d": 30 * 86_400_000,
  "90d": 90 * 86_400_000,
};

export const MAX_RESULTS_LIMIT = 1000;

// Query strings arrive as text: numbers are coerced explicitly.
export const resultsListInput = z.object({
  project: nameInPath,
  probeId: z.string(),
  limit: z.coerce.number().int().min(1).max(MAX_RESULTS_LIMIT).default(100),
  before: instant.optional(),
  location: locationFilter,
});
export type ResultsListInput = z.infer<typeof resultsListInput>;

export const probeResult = z.object({
  started_at: z.string(),
  duration_ms: z.int(),
  outcome,
  http_status: z.int().nullable(),
  error: z.string().nullable(),
  address: z.string().nullable(),
  /** The assertions the run failed (with what was seen); `[]` when all passed, null without any. */
  failed_checks: z.array(failedCheck).nullable(),
  /** The location that made the run. */
  location: z.string(),
  /** `manual` for a run asked for with `…/run`. */
  trigger: z.enum(["schedule", "manual"]),
  /** The run fell in a maintenance window: recorded, counted apart, not in uptime. */
  in_maintenance: z.boolean(),
});
export type ProbeResult = z.infer<typeof probeResult>;

export const resultsMeta = z.object({
  count: z.int(),
  /** Pass as `before` for the next (older) page; null on the last page. */
  next_before: z.string().nullable(),
});

export const probeStatsInput = z.object({
  project: nameInPath,
  probeId: z.string(),
  window: statsWindow.default("24h"),
  location: locationFilter,
});
export type ProbeStatsInput = z.infer<typeof probeStatsInput>;

/** Runs counted by outcome over a span (a window, a bucket), and the uptime they give. */
export const runCounts = {
  runs: z.int(),
  up: z.int(),
  degraded: z.int(),
  down: z.int(),
  blocked: z.int(),
  /** Runs in maintenance windows: not in `runs` and not in uptime. */
  maintenance: z.int(),
  /** Share (0 to 1) of runs that were up or degraded; null without runs. */
  uptime: z.number().nullable(),
};

export const probeStats = z.object({
  window: statsWindow,
  since: z.string(),
  ...runCounts,
  /** Latency percentiles in ms over the runs that got an HTTP response. */
  p50: z.int().nullable(),
  p95: z.int().nullable(),
  p99: z.int().nullable(),
  max: z.int().nullable(),
  /** `exact` from raw results; `estimated` from hourly histograms once raw results are pruned. */
  percentiles: z.enum(["exact", "estimated"]),
  last_outcome: outcome.nullable(),
  last_run_at: z.string().nullable(),
});
export type ProbeStats = z.infer<typeof probeStats>;

export const projectStatusInput = z.object({ project: nameInPath });

export const probeStatus = z.object({
  probe_id: z.string(),
  url: z.string(),
  method: z.string(),
  label: z.string().nullable(),
  state: probeState,
  state_since: z.string().nullable(),
  last_outcome: outcome.nullable(),
  last_run_at: z.string().nullable(),
  runs_24h: z.int(),
  uptime_24h: z.number().nullable(),
});
export type ProbeStatus = z.infer<typeof probeStatus>;

export const projectStatusMeta = z.object({
  count: z.int(),
  /** Whether the project's probes run at all. */
  status: z.enum(["enabled", "disabled"]),
});
