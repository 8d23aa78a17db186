import {
  countMeta,
  dataOf,
  dataWithMeta,
  iamAliveDeliveriesInput,
  iamAliveDelivery,
  iamAlivePatchInput,
  iamAliveSettings,
  iamAliveTestResult,
} from "@probe/shared";
import { z } from "zod";
import { afterCommit } from "../../storage/joined.ts";
import { unavailable } from "../../domain/errors.ts";
import { listDeliveries } from "../../alerting/iam_alive/store.ts";
import { getIamAlive, updateIamAlive } from "../../domain/settings.ts";
import { apiProcedure, audited, router } from "../init.ts";

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
        description: "Sending interval_hours or channels without enabled turns reporting on. " +
          "Turning reporting on, or sending interval_hours or channels, sends a report at once.",
        protect: true,
        errorResponses: { 422: "No fields were provided" },
      },
    })
    .input(iamAlivePatchInput)
    .use(audited)
    .output(dataOf(iamAliveSettings))
    .mutation(async ({ ctx, input }) => {
      const data = await updateIamAlive({ db: ctx.db, input });
      // Woken once the change is committed (the audit log's transaction holds it until then):
      // woken sooner, the reporter would read the settings as they were and sleep again.
      afterCommit(ctx.db, () => ctx.iamAlive?.wake());
      return { data };
    }),

  testIamAlive: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/settings/iam-alive/test",
        tags,
        summary: "Send one I'm alive report now",
        description: "Sends a test report over the selected channels, whether reporting is " +
          "enabled or not, and answers with each channel's outcome. The schedule is unchanged.",
        protect: true,
        errorResponses: { 503: "I'm alive reporting is not available" },
      },
    })
    // No input: no body or `{}`; anything else is refused (422), as for every such action.
    .input(z.strictObject({}).optional())
    .use(audited)
    .output(dataOf(iamAliveTestResult))
    .mutation(async ({ ctx }) => {
      if (!ctx.iamAlive) throw unavailable("I'm alive reporting");
      return { data: await ctx.iamAlive.sendTest() };
    }),

  listIamAliveDeliveries: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/settings/iam-alive/deliveries",
        tags,
        summary: "List recent I'm alive deliveries",
        description: "Newest first: one entry per report and channel, with its outcome.",
        protect: true,
      },
    })
    .input(iamAliveDeliveriesInput)
    .output(dataWithMeta(z.array(iamAliveDelivery), countMeta))
    .query(async ({ ctx, input }) => {
      const data = await listDeliveries({ db: ctx.db, input });
      return { data, meta: { count: data.length } };
    }),
});
