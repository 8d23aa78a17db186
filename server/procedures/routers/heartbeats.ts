import {
  dataOf,
  dataWithMeta,
  heartbeat,
  heartbeatCreateInput,
  heartbeatListInput,
  heartbeatPatchInput,
  heartbeatPing,
  heartbeatPingsInput,
  heartbeatRef,
  pageMeta,
} from "@probe/shared";
import { z } from "zod";
import {
  createHeartbeat,
  deleteHeartbeat,
  getHeartbeat,
  type HeartbeatContext,
  listHeartbeatPings,
  listHeartbeats,
  updateHeartbeat,
} from "../../domain/heartbeats.ts";
import type { Context } from "../context.ts";
import { apiProcedure, audited, router } from "../init.ts";
import { pageAnswer } from "../pages.ts";
import { seesSecrets } from "../shown.ts";

const tags = ["heartbeats"];
const notFound = { 404: "Heartbeat not found" };

/** What the domain needs of the call: ping URLs under `PUBLIC_URL` or the request's origin. */
const heartbeatContext = (ctx: Context): HeartbeatContext => ({
  db: ctx.db,
  baseUrl: ctx.publicUrl ?? ctx.origin ?? "",
  masked: !seesSecrets(ctx),
  now: ctx.heartbeatNow,
});

export const heartbeatsRouter = router({
  create: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/projects/{project}/heartbeats",
        tags,
        summary: "Make a heartbeat: a URL a job pings, and an alert when it falls silent",
        description: "Give `period_seconds` (10 s to a year), or `schedule` (cron) with " +
          "`timezone`; `grace_seconds` is how late a ping may be. Answers the heartbeat with " +
          "its `ping_url` (docs/heartbeats.md).",
        protect: true,
        errorResponses: {
          404: "Project not found",
          409: "The project has a heartbeat of that name",
        },
      },
      success: { 201: "Heartbeat created" },
    })
    .input(heartbeatCreateInput)
    .use(audited)
    .output(dataOf(heartbeat))
    .mutation(async ({ ctx, input }) => {
      const data = await createHeartbeat({ ...heartbeatContext(ctx), input });
      ctx.res.status = 201;
      return { data };
    }),

  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/heartbeats",
        tags,
        summary: "List a project's heartbeats, by name",
        protect: true,
        errorResponses: { 404: "Project not found" },
      },
      paged: true,
    })
    .input(heartbeatListInput)
    .output(dataWithMeta(z.array(heartbeat), pageMeta))
    .query(async ({ ctx, input: { project, ...page } }) =>
      pageAnswer(await listHeartbeats({ ...heartbeatContext(ctx), project, page }))
    ),

  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/heartbeats/{name}",
        tags,
        summary: "Get a heartbeat",
        protect: true,
        errorResponses: notFound,
      },
    })
    .input(heartbeatRef)
    .output(dataOf(heartbeat))
    .query(async ({ ctx, input }) => ({
      data: await getHeartbeat({ ...heartbeatContext(ctx), ref: input }),
    })),

  update: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/projects/{project}/heartbeats/{name}",
        tags,
        summary: "Change a heartbeat's timing",
        description: "`period_seconds` replaces a schedule, `schedule` a period; the deadline " +
          "is counted again from the last success.",
        protect: true,
        errorResponses: { ...notFound, 422: "No fields were provided" },
      },
    })
    .input(heartbeatPatchInput)
    .use(audited)
    .output(dataOf(heartbeat))
    .mutation(async ({ ctx, input }) => ({
      data: await updateHeartbeat({ ...heartbeatContext(ctx), input }),
    })),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/projects/{project}/heartbeats/{name}",
        tags,
        summary: "Delete a heartbeat; its open incident is resolved",
        protect: true,
        errorResponses: notFound,
      },
      success: { 204: "Heartbeat deleted; no body" },
    })
    .input(heartbeatRef)
    .use(audited)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteHeartbeat({ db: ctx.db, ref: input });
    }),

  pings: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/heartbeats/{name}/pings",
        tags,
        summary: "A heartbeat's latest pings, the latest first",
        description: "The latest 100 are kept, each with the first 10 KiB of its body.",
        protect: true,
        errorResponses: notFound,
      },
    })
    .input(heartbeatPingsInput)
    .output(dataWithMeta(z.array(heartbeatPing), z.object({ count: z.int() })))
    .query(async ({ ctx, input: { limit, ...ref } }) => {
      const data = await listHeartbeatPings({ db: ctx.db, ref, limit });
      return { data, meta: { count: data.length } };
    }),
});
