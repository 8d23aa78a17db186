import { Command, Option } from "commander";
import type { ProbeStats, ProbeStatus, Series, SeriesWindow, StatsWindow } from "@probe/client";
import type { CliContext } from "../context.ts";
import { integer } from "../options.ts";
import { record, table } from "../output.ts";

const WINDOWS: StatsWindow[] = ["1h", "24h", "7d", "30d", "90d"];
const SERIES_WINDOWS: SeriesWindow[] = ["24h", "7d", "30d", "90d"];

/** A share from 0 to 1 as a percentage for people; `null` (no runs) stays `null`. */
export const percent = (share: number | null) =>
  share === null ? null : `${(share * 100).toFixed(2)}%`;

const showStats = (s: ProbeStats) =>
  record({
    window: s.window,
    since: s.since,
    runs: s.runs,
    up: s.up,
    degraded: s.degraded,
    down: s.down,
    blocked: s.blocked,
    uptime: percent(s.uptime),
    p50_ms: s.p50,
    p95_ms: s.p95,
    p99_ms: s.p99,
    max_ms: s.max,
    percentiles: s.percentiles,
    last_outcome: s.last_outcome,
    last_run_at: s.last_run_at,
  });

/**
 * A series for people: its window, then the buckets that hold runs (an empty bucket says only that
 * nothing ran; `--json` has every bucket).
 */
const showSeries = (s: Series) => {
  const filled = s.buckets.filter((b) => b.runs > 0 || b.maintenance > 0);
  const head = record({
    window: s.window,
    since: s.since,
    until: s.until,
    bucket_seconds: s.bucket_seconds,
    percentiles: s.percentiles,
    buckets: s.buckets.length,
  });
  if (filled.length === 0) return `${head}\n\nNo runs in this window.`;
  const rows = table(
    [
      "START",
      "RUNS",
      "UP",
      "DEGRADED",
      "DOWN",
      "BLOCKED",
      "MAINTENANCE",
      "UPTIME",
      "P50_MS",
      "P95_MS",
      "MAX_MS",
    ],
    filled.map((b) => [
      b.start,
      b.runs,
      b.up,
      b.degraded,
      b.down,
      b.blocked,
      b.maintenance,
      percent(b.uptime),
      b.p50,
      b.p95,
      b.max,
    ]),
  );
  const empty = s.buckets.length - filled.length;
  const note = empty ? `\n${empty} of ${s.buckets.length} buckets without runs not shown.` : "";
  return `${head}\n\n${rows}${note}`;
};

/** A project's status board: one line per probe. */
export const statusRows = (probes: ProbeStatus[]) =>
  table(
    ["PROBE_ID", "METHOD", "URL", "LAST_OUTCOME", "LAST_RUN_AT", "RUNS_24H", "UPTIME_24H"],
    probes.map((p) => [
      p.probe_id,
      p.method,
      p.url,
      p.last_outcome,
      p.last_run_at,
      p.runs_24h,
      percent(p.uptime_24h),
    ]),
  );

/**
 * `results list|stats|series`: what the runner recorded for a probe (`projects status` for a
 * project, `overview` for every probe).
 */
export function resultsCommand(context: () => CliContext): Command {
  const results = new Command("results")
    .description(
      "Read a probe's results, statistics and series (a project's status board: projects " +
        "status; every probe: overview)",
    );

  results.command("list")
    .description("List a probe's results, newest first")
    .argument("<project>", "project name")
    .argument("<probeId>", "probe id")
    .option("--limit <n>", "how many, 1 to 1000 (default 100)", integer)
    .option("--before <time>", "only results older than this ISO time (the next page's cursor)")
    .option("--location <name>", "only the runs of this location (default: every location's)")
    .action(async (
      project: string,
      probeId: string,
      options: { limit?: number; before?: string; location?: string },
    ) => {
      const { client, out } = context();
      const result = await client().results.list({ project, probeId, ...options });
      out.result(() => {
        if (result.data.length === 0) return "No results.";
        const rows = table(
          ["STARTED_AT", "LOCATION", "OUTCOME", "HTTP", "DURATION_MS", "ADDRESS", "ERROR"],
          result.data.map((r) => [
            r.started_at,
            r.location,
            r.outcome,
            r.http_status,
            r.duration_ms,
            r.address,
            r.error,
          ]),
        );
        const next = result.meta.next_before;
        return next ? `${rows}\nNext page: --before ${next}` : rows;
      }, result);
    });

  results.command("stats")
    .description("Show a probe's uptime and latency over a window ending now")
    .argument("<project>", "project name")
    .argument("<probeId>", "probe id")
    .addOption(
      new Option("--window <window>", "how far back (default 24h)").choices(WINDOWS),
    )
    .option("--location <name>", "only the runs of this location (default: every location's)")
    .action(async (
      project: string,
      probeId: string,
      options: { window?: StatsWindow; location?: string },
    ) => {
      const { client, out } = context();
      const result = await client().results.stats({
        project,
        probeId,
        window: options.window,
        location: options.location,
      });
      out.result(() => showStats(result.data), result);
    });

  results.command("series")
    .description(
      "Show a probe's runs, uptime and latency bucket by bucket over a window ending now " +
        "(24h: 5-minute buckets, 7d: hourly, 30d and 90d: daily)",
    )
    .argument("<project>", "project name")
    .argument("<probeId>", "probe id")
    .addOption(
      new Option("--window <window>", "how far back (default 24h)").choices(SERIES_WINDOWS),
    )
    .option("--location <name>", "only the runs of this location (default: every location's)")
    .action(async (
      project: string,
      probeId: string,
      options: { window?: SeriesWindow; location?: string },
    ) => {
      const { client, out } = context();
      const result = await client().results.series({
        project,
        probeId,
        window: options.window,
        location: options.location,
      });
      out.result(() => showSeries(result.data), result);
    });

  return results;
}
