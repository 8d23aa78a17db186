import { dataOf, iamAlivePatchInput, iamAliveSettings } from "@probe/shared";
import { z } from "zod";
import { getIamAlive, updateIamAlive } from "../../domain/settings.ts";
import { apiProcedure, router } from "../init.ts";

const tags = ["settings"];

export const settingsRouter = router({
  getIamAlive: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/settings/iam-alive",
        tags,
        summary: "Get the I'm alive settings",
        protect: true,
        errorResponses: { 401: "Missing or invalid API key" },
      },
    })
    .input(z.object({}))
    .output(dataOf(iamAliveSettings))
    .query(async ({ ctx }) => ({ data: await getIamAlive({ db: ctx.db }) })),

  updateIamAlive: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/settings/iam-alive",
        tags,
        summary: "Update the I'm alive settings",
        description: "Sending interval_hours or channels without enabled turns reporting on.",
        protect: true,
        errorResponses: {
          401: "Missing or invalid API key",
          422: "Validation failed or no fields were provided",
        },
      },
    })
    .input(iamAlivePatchInput)
    .output(dataOf(iamAliveSettings))
    .mutation(async ({ ctx, input }) => ({ data: await updateIamAlive({ db: ctx.db, input }) })),
});
