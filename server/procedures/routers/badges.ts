import {
  badge,
  badgeCreateInput,
  badgeListInput,
  badgeRef,
  badgeRotateInput,
  badgeWithToken,
  countMeta,
  dataOf,
  dataWithMeta,
  MAX_BADGES_PER_PROJECT,
} from "@probe/shared";
import { z } from "zod";
import { createBadge, deleteBadge, listBadges, rotateBadge } from "../../domain/badges.ts";
import { apiProcedure, audited, router } from "../init.ts";

const tags = ["badges"];
const badgeNotFound = { 404: "Badge not found" };

export const badgesRouter = router({
  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/badges",
        tags,
        summary: "List a project's badge tokens, each with its token and badge paths",
        protect: true,
        errorResponses: { 404: "Project not found" },
      },
    })
    .input(badgeListInput)
    .output(dataWithMeta(z.array(badge), countMeta))
    .query(async ({ ctx, input }) => {
      const data = await listBadges({ db: ctx.db, project: input.project });
      return { data, meta: { count: data.length } };
    }),

  create: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/projects/{project}/badges",
        tags,
        summary: "Make a badge token for a probe or for the whole project",
        description: "With `probe_id`, the token serves that probe's badges; with `{}`, the " +
          "project's (its worst state; uptime and latency of all its probes together). The " +
          "list answers the token again. It serves badges and nothing else.",
        protect: true,
        errorResponses: {
          404: "Project not found",
          409: `A project holds at most ${MAX_BADGES_PER_PROJECT} badge tokens`,
        },
      },
      success: { 201: "Badge token created; the token is shown this once" },
    })
    .input(badgeCreateInput)
    .use(audited)
    .output(dataOf(badgeWithToken))
    .mutation(async ({ ctx, input }) => ({ data: await createBadge({ db: ctx.db, input }) })),

  rotate: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/projects/{project}/badges/{id}/rotate",
        tags,
        summary: "Give a badge a new token; the old one stops serving",
        description: "Takes no input: send no body or `{}`. The old token stops at once.",
        protect: true,
        errorResponses: badgeNotFound,
      },
    })
    .input(badgeRotateInput)
    .use(audited)
    .output(dataOf(badgeWithToken))
    .mutation(async ({ ctx, input }) => ({ data: await rotateBadge({ db: ctx.db, ref: input }) })),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/projects/{project}/badges/{id}",
        tags,
        summary: "Delete a badge token",
        protect: true,
        errorResponses: badgeNotFound,
      },
      success: { 204: "Badge token deleted; no body" },
    })
    .input(badgeRef)
    .use(audited)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteBadge({ db: ctx.db, ref: input });
    }),
});
