import {
  dataOf,
  dataWithMeta,
  maintenanceCreateInput,
  maintenanceListInput,
  maintenanceListMeta,
  maintenanceRef,
  maintenanceWindow,
} from "@probe/shared";
import { z } from "zod";
import { createMaintenance, deleteMaintenance, listMaintenance } from "../../domain/maintenance.ts";
import { apiProcedure, audited, router } from "../init.ts";

const tags = ["maintenance"];

export const maintenanceRouter = router({
  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/maintenance",
        tags,
        summary: "List a project's maintenance windows",
        description: "Ordered by starts_at. `state` picks `active`, `upcoming` or `past` " +
          "windows at the time of the request; `all` (the default) lists every one.",
        protect: true,
        errorResponses: { 404: "Project not found" },
      },
    })
    .input(maintenanceListInput)
    .output(dataWithMeta(z.array(maintenanceWindow), maintenanceListMeta))
    .query(async ({ ctx, input }) => {
      const data = await listMaintenance({ db: ctx.db, input });
      return { data, meta: { count: data.length } };
    }),

  create: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/projects/{project}/maintenance",
        tags,
        summary: "Add a maintenance window to a project",
        description: "Runs starting inside `[starts_at, ends_at)` are recorded as in " +
          "maintenance: no transition alerts, not counted in uptime. Times are ISO 8601 with " +
          "an offset; a window lasts at most 366 days.",
        protect: true,
        errorResponses: {
          404: "Project not found",
          409: "A project holds at most 1000 maintenance windows",
        },
      },
      success: { 201: "Maintenance window created" },
    })
    .input(maintenanceCreateInput)
    .use(audited)
    .output(dataOf(maintenanceWindow))
    .mutation(async ({ ctx, input }) => ({
      data: await createMaintenance({ db: ctx.db, input }),
    })),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/projects/{project}/maintenance/{id}",
        tags,
        summary: "Delete a maintenance window",
        protect: true,
        errorResponses: { 404: "Maintenance window not found" },
      },
      success: { 204: "Maintenance window deleted; no body" },
    })
    .input(maintenanceRef)
    .use(audited)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteMaintenance({ db: ctx.db, ref: input });
    }),
});
