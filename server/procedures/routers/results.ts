import {
  dataOf,
  dataWithMeta,
  probeResult,
  probeStats,
  probeStatsInput,
  probeStatus,
  projectStatusInput,
  projectStatusMeta,
  resultsListInput,
  resultsMeta,
  series,
  seriesInput,
} from "@probe/shared";
import { z } from "zod";
import { listResults, probeStats as readProbeStats, projectStatus } from "../../domain/results.ts";
import { probeSeries } from "../../domain/series.ts";
import { apiProcedure, router } from "../init.ts";
import { shown } from "../shown.ts";

const tags = ["results"];

export const resultsRouter = router({
  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/probes/{probeId}/results",
        tags,
        summary: "A probe's results, newest first",
        description:
          "Pages of `limit` (1 to 1000, default 100); pass `meta.next_before` as `before` for " +
          "the next page. `location` keeps one location's runs.",
        protect: true,
        errorResponses: { 404: "Probe not found" },
      },
    })
    .input(resultsListInput)
    .output(dataWithMeta(z.array(probeResult), resultsMeta))
    .query(({ ctx, input }) => listResults({ db: ctx.db, input, names: ctx.probeDefaults })),

  stats: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/probes/{probeId}/stats",
        tags,
        summary: "A probe's uptime and latency over a window",
        description: "`window` is one of 1h, 24h (default), 7d, 30d, 90d; `location` counts " +
          "one location's runs only (every location's by default).",
        protect: true,
        errorResponses: { 404: "Probe not found" },
      },
    })
    .input(probeStatsInput)
    .output(dataOf(probeStats))
    .query(async ({ ctx, input }) => ({
      data: await readProbeStats({ db: ctx.db, input, names: ctx.probeDefaults }),
    })),

  status: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/status",
        tags,
        summary: "Each probe's last outcome and 24-hour uptime",
        protect: true,
        errorResponses: { 404: "Project not found" },
      },
    })
    .input(projectStatusInput)
    .output(dataWithMeta(z.array(probeStatus), projectStatusMeta))
    .query(async ({ ctx, input }) => {
      const { data, meta } = await projectStatus({ db: ctx.db, project: input.project });
      const show = shown(ctx);
      return { data: data.map((p) => show.probe(p)), meta };
    }),

  series: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/probes/{probeId}/series",
        tags,
        summary: "A probe's runs, uptime and latency bucket by bucket, for charts",
        description: "`window` is one of 1h (60 one-minute buckets), 6h (72 five-minute " +
          "buckets), 24h (default: 288 five-minute buckets), all three from the raw results " +
          "with exact percentiles; 7d (168 hourly buckets), 30d or 90d (daily buckets) from " +
          "the hourly rollups, with percentiles estimated from their histograms. Every bucket, " +
          "oldest first, empty ones included; times in UTC. `history_since` says when the " +
          "probe's oldest run still held started, so a window longer than the history can " +
          "say so.",
        protect: true,
        errorResponses: { 404: "Probe not found" },
      },
    })
    .input(seriesInput)
    .output(dataOf(series))
    .query(async ({ ctx, input }) => ({
      data: await probeSeries({ db: ctx.db, input, names: ctx.probeDefaults }),
    })),
});
