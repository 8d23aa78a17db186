import { dataOf } from "@probe/shared";
import { z } from "zod";
import { apiProcedure, router } from "../init.ts";
import { SERVICE_VERSION } from "../../base/version.ts";

/**
 * Who is calling and what it may do (its role, its projects, and the scope they make); and what
 * the service it speaks to is, for a client to show (the dashboard's Settings page, the CLI).
 */
const whoami = z.object({
  name: z.string().describe(
    "The caller as the audit log names it: a stored key's name, a signed-in user, or a " +
      "configured key's variable (`SERVICE_API_KEY`).",
  ),
  role: z.enum(["viewer", "editor", "admin"]).describe(
    "`viewer` reads; `editor` also changes projects and what is theirs; `admin` also " +
      "administers the service (docs/access.md).",
  ),
  projects: z.array(z.string()).nullable().describe(
    "The projects the caller is limited to; null for every project. A caller limited to " +
      "projects cannot create projects nor change what they share.",
  ),
  scope: z.enum(["read", "write"]).describe(
    "`write`: every operation its role allows; `read`: GET operations only, every other one " +
      "answers 403.",
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
        summary: "Who is calling (name, role, projects), and the service's version and database",
        description: "Says who the key in `X-Service-Api-Key` (or the dashboard's session) is: " +
          "its name, role and projects, and whether it may write (`write`) or only read " +
          "(`read`): a client can hide what it cannot do. With the service's version and the " +
          "kind of database it uses.",
        protect: true,
      },
    })
    .input(z.object({}))
    .output(dataOf(whoami))
    // A location token never gets here (`apiProcedure` refuses it).
    .query(({ ctx }) => ({
      data: {
        name: ctx.principal.name,
        role: ctx.principal.role,
        projects: ctx.principal.projects === null ? null : [...ctx.principal.projects],
        scope: ctx.scope === "read" ? "read" : "write",
        version: SERVICE_VERSION,
        database: ctx.databaseKind ? DATABASES[ctx.databaseKind] : null,
      },
    })),
});
