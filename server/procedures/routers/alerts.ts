import {
  alertPolicy,
  alertPolicyPatchInput,
  dataOf,
  projectAlerts,
  projectAlertsPatchInput,
  projectAlertsRef,
} from "@probe/shared";
import { z } from "zod";
import {
  getAlertPolicy,
  getProjectAlerts,
  updateAlertPolicy,
  updateProjectAlerts,
} from "../../domain/alerts.ts";
import { apiProcedure, audited, router } from "../init.ts";

const tags = ["alerts"];

export const alertsRouter = router({
  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/settings/alerts",
        tags,
        summary: "Get the global alert policy",
        protect: true,
      },
    })
    .input(z.object({}))
    .output(dataOf(alertPolicy))
    .query(async ({ ctx }) => ({ data: await getAlertPolicy({ db: ctx.db }) })),

  update: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/settings/alerts",
        tags,
        summary: "Update the global alert policy",
        description: "Fields not sent stay as they are; only `enabled: true` turns alerts on. " +
          "Every target named must exist (`log`, or a stored notification target).",
        protect: true,
        errorResponses: { 422: "No fields were provided" },
      },
    })
    .input(alertPolicyPatchInput)
    .use(audited)
    .output(dataOf(alertPolicy))
    .mutation(async ({ ctx, input }) => ({
      data: await updateAlertPolicy({ db: ctx.db, input }),
    })),

  getProject: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/alerts",
        tags,
        summary: "Get a project's alert overrides and the policy that applies to it",
        description: "`overrides` holds the project's own values (null inherits the global " +
          "policy); `effective` is the policy that applies.",
        protect: true,
        errorResponses: { 404: "Project not found" },
      },
    })
    .input(projectAlertsRef)
    .output(dataOf(projectAlerts))
    .query(async ({ ctx, input }) => ({
      data: await getProjectAlerts({ db: ctx.db, project: input.project }),
    })),

  updateProject: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/projects/{project}/alerts",
        tags,
        summary: "Override alert policy fields for a project",
        description: "A value overrides the global policy for this project; null inherits it " +
          "again; fields not sent stay as they are.",
        protect: true,
        errorResponses: { 404: "Project not found", 422: "No fields were provided" },
      },
    })
    .input(projectAlertsPatchInput)
    .use(audited)
    .output(dataOf(projectAlerts))
    .mutation(async ({ ctx, input }) => ({
      data: await updateProjectAlerts({ db: ctx.db, input }),
    })),
});
