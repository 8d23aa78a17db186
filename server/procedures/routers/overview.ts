import { dataWithMeta, overview, overviewInput, overviewMeta } from "@probe/shared";
import { getOverview } from "../../domain/overview.ts";
import { apiProcedure, router } from "../init.ts";
import { shown } from "../shown.ts";
import { visibleProjects } from "../scope.ts";

const tags = ["overview"];

export const overviewRouter = router({
  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/overview",
        tags,
        summary: "Every project with every probe's state, uptime and latency, and open incidents",
        description: "One call for the dashboard: each probe's state, last run, uptime over " +
          "24 hours, 7 and 30 days, p95 latency over 24 hours and a 24-hour hourly sparkline, " +
          "down first; the open incidents, newest first (at most 100). `project` narrows it " +
          "to one project.",
        protect: true,
        errorResponses: { 404: "Project not found" },
      },
    })
    .input(overviewInput)
    .output(dataWithMeta(overview, overviewMeta))
    .query(async ({ ctx, input }) => {
      const { data, meta } = await getOverview({
        db: ctx.db,
        project: input.project,
        visible: visibleProjects(ctx.principal),
      });
      const show = shown(ctx);
      const projects = data.projects.map((p) => ({
        ...p,
        probes: p.probes.map((probe) => show.probe(probe)),
      }));
      return { data: { ...data, projects }, meta };
    }),
});
