import {
  countMeta,
  dataOf,
  dataWithMeta,
  targetNameInPath,
  targetRef,
  targetTestResult,
} from "@probe/shared";
import { z } from "zod";
import { unavailable } from "../../domain/errors.ts";
import {
  createTarget,
  deleteTarget,
  getTarget,
  listTargets,
  updateTarget,
} from "../../domain/targets.ts";
import {
  notificationTargetRead as notificationTarget,
  targetCreateInput,
  targetKind,
  targetKinds,
  targetPatchInput,
} from "../../alerting/notify/providers/schema.ts";
import { testEvent } from "../../alerting/notify/targets.ts";
import { apiProcedure, audited, router } from "../init.ts";
import { shown } from "../shown.ts";

const tags = ["notification-targets"];
const NOT_FOUND = "Notification target not found";
const BUILT_IN = "The built-in log target cannot be changed or deleted";

export const targetsRouter = router({
  kinds: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/notification-target-kinds",
        tags,
        summary: "List the kinds of notification target",
        description: "Each kind a target may have, with its fields: their names, how to ask " +
          "for them, whether they are required or secret (never shown again once written).",
        protect: true,
      },
    })
    .input(z.object({}))
    .output(dataWithMeta(z.array(targetKind), countMeta))
    .query(() => {
      const data = targetKinds();
      return { data, meta: { count: data.length } };
    }),

  create: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/notification-targets",
        tags,
        summary: "Create a notification target",
        description: "A webhook without a `secret` gets a generated signing key, answered in " +
          "full this once (`data.secret`); no other answer shows it.",
        protect: true,
        errorResponses: { 409: "Notification target already exists" },
      },
      success: { 201: "Notification target created" },
    })
    .input(targetCreateInput)
    .use(audited)
    .output(dataOf(notificationTarget))
    .mutation(async ({ ctx, input }) => ({ data: await createTarget({ db: ctx.db, input }) })),

  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/notification-targets",
        tags,
        summary: "List notification targets",
        description: "The built-in `log` target first, then the stored ones by name. Secrets " +
          "are masked.",
        protect: true,
      },
    })
    .input(z.object({}))
    .output(dataWithMeta(z.array(notificationTarget), countMeta))
    .query(async ({ ctx }) => {
      const show = shown(ctx);
      const data = (await listTargets({ db: ctx.db })).map((t) => show.target(t));
      return { data, meta: { count: data.length } };
    }),

  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/notification-targets/{name}",
        tags,
        summary: "Get a notification target",
        protect: true,
        errorResponses: { 404: NOT_FOUND },
      },
    })
    .input(targetRef)
    .output(dataOf(notificationTarget))
    .query(async ({ ctx, input }) => ({
      data: shown(ctx).target(await getTarget({ db: ctx.db, name: input.name })),
    })),

  update: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/notification-targets/{name}",
        tags,
        summary: "Update a notification target",
        description: "Changes the fields its kind has: `url` (webhook, slack, discord), " +
          "`secret` (webhook), `recipients` (mail). The kind cannot change.",
        protect: true,
        errorResponses: { 404: NOT_FOUND, 409: BUILT_IN, 422: "No fields were provided" },
      },
    })
    .input(targetPatchInput)
    .use(audited)
    .output(dataOf(notificationTarget))
    .mutation(async ({ ctx, input }) => ({ data: await updateTarget({ db: ctx.db, input }) })),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/notification-targets/{name}",
        tags,
        summary: "Delete a notification target",
        description: "Refused (409) while the alert policy or a project's alert overrides " +
          "name the target.",
        protect: true,
        errorResponses: { 404: NOT_FOUND, 409: "Notification target is in use" },
      },
      success: { 204: "Notification target deleted; no body" },
    })
    .input(targetRef)
    .use(audited)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteTarget({ db: ctx.db, name: input.name });
    }),

  test: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/notification-targets/{name}/test",
        tags,
        summary: "Send a test notification",
        description: "Sends one `target.test` event to the target now (one attempt, no " +
          "retries) and answers with its outcome. The built-in `log` target can be tested too.",
        protect: true,
        errorResponses: { 404: NOT_FOUND, 503: "Notification delivery is not available" },
      },
    })
    // No input but the path: no body or `{}`; anything else is refused (422).
    .input(z.strictObject({ name: targetNameInPath }))
    .use(audited)
    .output(dataOf(targetTestResult))
    .mutation(async ({ ctx, input }) => {
      // An unknown name is a 404 (not a failed delivery); `log` is always there.
      const { name } = await getTarget({ db: ctx.db, name: input.name });
      if (!ctx.notifier) throw unavailable("Notification delivery");
      const result = await ctx.notifier.send(name, {
        id: `msg_test_${crypto.randomUUID()}`,
        event: testEvent(name, new Date()),
      });
      return { data: { target: name, ...result } };
    }),
});
