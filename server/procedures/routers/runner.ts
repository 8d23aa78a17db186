import {
  claimAnswer,
  claimInput,
  dataOf,
  resultsPostAnswer,
  resultsPostInput,
} from "@probe/shared";
import { unavailable } from "../../domain/errors.ts";
import { router, runnerProcedure } from "../init.ts";

const tags = ["runner"];

export const runnerRouter = router({
  claim: runnerProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/runner/claim",
        tags,
        summary: "Claim due runs of the token's location",
        description: "For a location token only (docs/locations.md). Up to `max` runs due " +
          "within the next second, each with a `run_id` and a lease; when none is due the " +
          "answer waits up to `wait_seconds` (25 by default) for some. Says the runner was seen.",
        protect: true,
      },
    })
    .input(claimInput)
    .output(dataOf(claimAnswer))
    .mutation(async ({ ctx, input, signal }) => {
      if (!ctx.remoteRuns) throw unavailable("The runner protocol");
      return { data: await ctx.remoteRuns.claim(ctx.location, input, signal) };
    }),

  results: runnerProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/runner/results",
        tags,
        summary: "Post results of claimed runs",
        description: "For a location token only. Each result names its `run_id`; each is " +
          "answered `recorded`, `duplicate` (posted before: recorded once) or `expired` (its " +
          "lease ran out and another runner took the run over). A run id not claimed for " +
          "this location is a 409, and nothing of the post is recorded.",
        protect: true,
        errorResponses: { 409: "Results for runs not claimed for this location" },
      },
    })
    .input(resultsPostInput)
    .output(dataOf(resultsPostAnswer))
    .mutation(async ({ ctx, input }) => {
      if (!ctx.remoteRuns) throw unavailable("The runner protocol");
      return { data: await ctx.remoteRuns.post(ctx.location, input) };
    }),
});
