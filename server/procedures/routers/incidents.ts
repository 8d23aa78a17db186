import {
  dataOf,
  dataWithMeta,
  incident,
  incidentDetail,
  incidentListInput,
  incidentRef,
  incidentsMeta,
} from "@probe/shared";
import { z } from "zod";
import { acknowledgeIncident, getIncident, listIncidents } from "../../domain/incidents.ts";
import { apiProcedure, audited, router } from "../init.ts";
import { visibleProjects } from "../scope.ts";

const tags = ["incidents"];

export const incidentsRouter = router({
  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/incidents",
        tags,
        summary: "List incidents, newest first",
        description: "Filter by project, probe (`probe_id` with `project`) and state; page " +
          "with `limit` and `before`.",
        protect: true,
        errorResponses: { 404: "Probe not found" },
      },
    })
    .input(incidentListInput)
    .output(dataWithMeta(z.array(incident), incidentsMeta))
    .query(({ ctx, input }) =>
      listIncidents({ db: ctx.db, input, visible: visibleProjects(ctx.principal) })
    ),

  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/incidents/{id}",
        tags,
        summary: "Get an incident with the notifications sent for it",
        protect: true,
        errorResponses: { 404: "Incident not found" },
      },
    })
    .input(incidentRef)
    .output(dataOf(incidentDetail))
    .query(async ({ ctx, input }) => ({
      data: await getIncident({
        db: ctx.db,
        id: input.id,
        visible: visibleProjects(ctx.principal),
      }),
    })),

  acknowledge: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/incidents/{id}/acknowledge",
        tags,
        summary: "Acknowledge an open incident: its reminders stop",
        description: "Takes no input: send no body or `{}`.",
        protect: true,
        errorResponses: { 404: "Incident not found", 409: "Incident is resolved" },
      },
    })
    .input(z.strictObject({ id: z.string() }))
    .use(audited)
    .output(dataOf(incident))
    .mutation(async ({ ctx, input }) => ({
      data: await acknowledgeIncident({
        db: ctx.db,
        id: input.id,
        visible: visibleProjects(ctx.principal),
      }),
    })),
});
