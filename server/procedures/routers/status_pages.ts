import { dataOf, statusPagePatchInput, statusPageRef, statusPageSettings } from "@probe/shared";
import { getStatusPage, updateStatusPage } from "../../domain/status_pages.ts";
import { apiProcedure, audited, router } from "../init.ts";

const tags = ["status-pages"];

export const statusPagesRouter = router({
  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/status-page",
        tags,
        summary: "Get a project's public status page settings",
        description: "A project's page is private (404 at `page_path`) until `public` is true.",
        protect: true,
        errorResponses: { 404: "Project not found" },
      },
    })
    .input(statusPageRef)
    .output(dataOf(statusPageSettings))
    .query(async ({ ctx, input }) => ({
      data: await getStatusPage({ db: ctx.db, project: input.project }),
    })),

  update: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/projects/{project}/status-page",
        tags,
        summary: "Change a project's public status page settings",
        description: "Any of `public`, `title`, `description` (null: back to the default), " +
          "`show_urls` and `show_locations`. The page is served without a key at " +
          "`/status/{project}` while `public` is true; URLs appear on it only with `show_urls`, " +
          "location names only with `show_locations`.",
        protect: true,
        errorResponses: { 404: "Project not found", 422: "No fields were provided" },
      },
    })
    .input(statusPagePatchInput)
    .use(audited)
    .output(dataOf(statusPageSettings))
    .mutation(async ({ ctx, input }) => ({
      data: await updateStatusPage({ db: ctx.db, input }),
    })),
});
