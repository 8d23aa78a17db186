import { dataOf } from "@probe/shared";
import { z } from "zod";
import { apiProcedure, router } from "../init.ts";

/** What the caller's key may do: `write` (everything) or `read` (queries only). */
const whoami = z.object({
  scope: z.enum(["read", "write"]).describe(
    "`write`: every operation; `read`: GET operations only, every other one answers 403.",
  ),
});

export const whoamiRouter = router({
  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/whoami",
        tags: ["whoami"],
        summary: "The scope of the key used",
        description: "Says whether the key in `X-Service-Api-Key` may write (`write`) or only " +
          "read (`read`, a key of `SERVICE_API_KEYS_READONLY`): a client can hide what it " +
          "cannot do.",
        protect: true,
      },
    })
    .input(z.object({}))
    .output(dataOf(whoami))
    // A location token never gets here (`apiProcedure` refuses it).
    .query(({ ctx }) => ({ data: { scope: ctx.scope === "read" ? "read" : "write" } })),
});
