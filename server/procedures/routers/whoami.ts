import { dataOf } from "@probe/shared";
import { z } from "zod";
import { apiProcedure, router } from "../init.ts";
import { SERVICE_VERSION } from "../../base/version.ts";

/**
 * What the caller's key may do: `write` (everything) or `read` (queries only); and what the
 * service it speaks to is, for a client to show (the dashboard's Settings page).
 */
const whoami = z.object({
  scope: z.enum(["read", "write"]).describe(
    "`write`: every operation; `read`: GET operations only, every other one answers 403.",
  ),
  version: z.string().describe("The service's version (`0.1.0`)."),
  database: z.enum(["embedded", "postgresql"]).nullable().describe(
    "The database the service keeps its data in: `embedded` (PGlite in `DATA_DIR`, no " +
      "`DATABASE_URL`) or `postgresql` (`DATABASE_URL`); null where the process does not say.",
  ),
});

const DATABASES = { pglite: "embedded", postgres: "postgresql" } as const;

export const whoamiRouter = router({
  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/whoami",
        tags: ["whoami"],
        summary: "The scope of the key used, and the service's version and database",
        description: "Says whether the key in `X-Service-Api-Key` may write (`write`) or only " +
          "read (`read`, a key of `SERVICE_API_KEYS_READONLY`): a client can hide what it " +
          "cannot do. With the service's version and the kind of database it uses.",
        protect: true,
      },
    })
    .input(z.object({}))
    .output(dataOf(whoami))
    // A location token never gets here (`apiProcedure` refuses it).
    .query(({ ctx }) => ({
      data: {
        scope: ctx.scope === "read" ? "read" : "write",
        version: SERVICE_VERSION,
        database: ctx.databaseKind ? DATABASES[ctx.databaseKind] : null,
      },
    })),
});
