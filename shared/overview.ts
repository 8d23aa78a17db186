import { z } from "zod";
import { incident } from "./incidents.ts";
import { probeState } from "./probe.ts";
import { outcome, OUTCOMES, runCounts } from "./results.ts";
import { locationFilter, nameInPath } from "./project.ts";

/** `GET /overview`: every probe at once, for the dashboard; optionally one project's. */
export const overviewInput = z.object({ project: z.string().optional() });

/** A run in the overview's row of last runs: its outcome, or `maintenance` when in a window. */
export const recentRun = z.enum([...OUTCOMES, "maintenance"]);
export type RecentRun = z.infer<typeof recentRun>;

export const overviewProbe = z.object({
  probe_id: z.string(),
  label: z.string().nullable(),
  url: z.string(),
  method: z.string(),
  state: probeState,
  state_since: z.string().nullable(),
  /** Present (true) while the probe is flapping (docs/alerts.md); absent otherwise. */
  flapping: z.literal(true).optional(),
  last_outcome: outcome.nullable(),
  last_run_at: z.string().nullable(),
  /**
   * Why the network policy refused the last run, when it did (`blocked: 127.0.0.1 is loopback
   * (not in PROBE_ALLOW_NETWORKS)`); null when the last run was not `blocked`.
   */
  blocked_reason: z.string().nullable(),
  /** Share (0 to 1) of counted runs up or degraded (blocked ones apart); null without runs. */
  uptime_24h: z.number().nullable(),
  uptime_7d: z.number().nullable(),
  uptime_30d: z.number().nullable(),
  /** p95 latency over 24 h, ms; null without responses. */
  p95_24h: z.int().nullable(),
  /** The last 24 hours, hour by hour, oldest first: uptime per hour (null: no runs). */
  sparkline: z.array(z.number().nullable()),
  /**
   * When the probe's history in the last 30 days starts (null: no runs in them): the start of
   * the hour of its oldest counted run, or the probe's creation when that falls in that hour. Later than a
   * window's start when that window (24 h, 7 d, 30 d) is longer than the history.
   */
  history_since: z.string().nullable(),
  /** Its last runs of the last 24 hours (at most 20, every location's), oldest first. */
  recent_runs: z.array(recentRun),
  /** The newest of them's duration, ms; null without any. */
  last_duration_ms: z.int().nullable(),
});
export type OverviewProbe = z.infer<typeof overviewProbe>;

export const overviewProject = z.object({
  project: z.string(),
  label: z.string().nullable(),
  status: z.enum(["enabled", "disabled"]),
  /** Down first, then degraded, unknown, up; then by label or URL. */
  probes: z.array(overviewProbe),
});
export type OverviewProject = z.infer<typeof overviewProject>;

/**
 * How far behind the probe runners are, all of them (whatever `project` the overview is for):
 * the age of the oldest run due and not yet claimed by any runner (seconds, 0 when none), and
 * whether that is 5 s or more (the runners cannot keep up: start another runner, or set longer
 * intervals; docs/runner.md, "Overload").
 */
export const overviewSchedule = z.object({
  lag_seconds: z.number(),
  overloaded: z.boolean(),
});

export const overview = z.object({
  /** Open incidents, newest first (at most 100). */
  incidents: z.array(incident),
  projects: z.array(overviewProject),
  schedule: overviewSchedule,
});
export type Overview = z.infer<typeof overview>;

export const overviewMeta = z.object({
  projects: z.int(),
  probes: z.int(),
  generated_at: z.string(),
});

export const SERIES_WINDOWS = ["1h", "6h", "24h", "7d", "30d", "90d"] as const;

/** `GET /projects/{project}/probes/{probeId}/series`. */
export const seriesInput = z.object({
  project: nameInPath,
  probeId: z.string(),
  window: z.enum(SERIES_WINDOWS).default("24h"),
  location: locationFilter,
});
export type SeriesInput = z.infer<typeof seriesInput>;

export const seriesBucket = z.object({
  /** The bucket's start, UTC. */
  start: z.string(),
  ...runCounts,
  p50: z.int().nullable(),
  p95: z.int().nullable(),
  max: z.int().nullable(),
});
export type SeriesBucket = z.infer<typeof seriesBucket>;

export const series = z.object({
  window: z.enum(SERIES_WINDOWS),
  /** 60 (a minute) for 1h; 300 (5 minutes) for 6h and 24h; 3600 for 7d; 86400 for 30d, 90d. */
  bucket_seconds: z.int(),
  since: z.string(),
  until: z.string(),
  /** Every bucket of the window, oldest first, empty ones included. */
  buckets: z.array(seriesBucket),
  /** `exact` from raw results; `estimated` from hourly histograms. */
  percentiles: z.enum(["exact", "estimated"]),
  /**
   * When the probe's oldest run the service still holds started (null: no runs yet). Later than
   * `since` when the window is longer than the probe's history.
   */
  history_since: z.string().nullable(),
});
export type Series = z.infer<typeof series>;
