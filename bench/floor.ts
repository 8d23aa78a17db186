/**
 * The stack's floor, not part of the product: the benchmark's project read (`REST GET
 * /api/v1/projects/{project}`) through the libraries the service is built on and nothing of the
 * service's own request path. A bare `Deno.serve` (no connection layer), one Hono route, the key
 * compared with `===`, a tRPC procedure called through its public caller (one middleware, a zod
 * input and output, as every procedure of the service has), one Kysely query, compiled once as
 * the service's is (`server/storage/prepared.ts`), run through the service's postgres.js dialect (the
 * only bridge between the two; it holds the connection watch).
 * No access log, metrics, rate limit, CORS or security headers.
 *
 * What it answers against the baseline (`baseline.ts`) is as near the baseline as the chosen
 * stack lets the service come: `bench:http` prints it as its "stack floor" row.
 *
 * `WITHOUT` drops libraries, to tell what each costs: `trpc`, the route validates its input and
 * output with the procedure's zod schemas and runs the query itself (no tRPC); `trpc,zod`, the
 * same without the validation; `kysely`, the query through postgres.js's own tagged template (no
 * Kysely, no dialect). They combine (`trpc,zod,kysely`).
 *
 * Environment: DATABASE_URL, SERVICE_API_KEY, PORT, HOST, DATABASE_POOL_SIZE, WITHOUT.
 */
import { Hono } from "hono";
import { initTRPC, TRPCError } from "@trpc/server";
import { z } from "zod";
import postgres from "postgres";
import { type Db, openDatabase } from "../server/storage/database.ts";
import { prepared } from "../server/storage/prepared.ts";

const env = Deno.env.toObject();
const key = env.SERVICE_API_KEY;
const without = new Set((env.WITHOUT ?? "").split(",").filter(Boolean));
const poolSize = Number(env.DATABASE_POOL_SIZE ?? 10);

interface ProjectRow {
  project: string;
  label: string | null;
  description: string | null;
  status: string;
}

/** The one query, through Kysely and the service's dialect, or postgres.js alone. */
async function readProject(): Promise<(name: string) => Promise<ProjectRow | undefined>> {
  if (without.has("kysely")) {
    const sql = postgres(env.DATABASE_URL, { max: poolSize, onnotice: () => {} });
    return async (name) => {
      const [row] = await sql<ProjectRow[]>`select name as project, label, description, status
        from projects where name = ${name}`;
      return row;
    };
  }
  const { db } = await openDatabase({ kind: "postgres", url: env.DATABASE_URL, poolSize });
  // Compiled once, as the service compiles its project read.
  const projectNamed = prepared((db: Db, name: string) =>
    db.selectFrom("projects")
      .select(["name as project", "label", "description", "status"])
      .where("name", "=", name)
  );
  return async (name) => (await projectNamed(db, name))[0];
}
const read = await readProject();

const t = initTRPC.context<{ scope: string }>().create();
const procedure = t.procedure.use(({ ctx, type, next }) => {
  if (type === "mutation" && ctx.scope !== "write") throw new TRPCError({ code: "FORBIDDEN" });
  return next();
});
const project = z.object({
  project: z.string(),
  label: z.string().nullable(),
  description: z.string().nullable(),
  status: z.string(),
});
const input = z.object({ project: z.string().min(1) });
const output = z.object({ data: project });
const router = t.router({
  projects: t.router({
    get: procedure
      .input(input)
      .output(output)
      .query(async ({ input }) => {
        const row = await read(input.project);
        if (!row) throw new TRPCError({ code: "NOT_FOUND" });
        return { data: row };
      }),
  }),
});
const createCaller = t.createCallerFactory(router);

const app = new Hono();
app.get("/healthz", (c) => c.json({ status: "ok" }));
app.get("/api/v1/projects/:project", async (c) => {
  if (c.req.header("x-service-api-key") !== key) {
    return c.json({ error: { code: "unauthorized", message: "Unauthorized" } }, 401);
  }
  try {
    const project = c.req.param("project");
    if (without.has("trpc")) {
      const zod = !without.has("zod");
      const row = await read(zod ? input.parse({ project }).project : project);
      if (!row) throw new TRPCError({ code: "NOT_FOUND" });
      return c.json(zod ? output.parse({ data: row }) : { data: row });
    }
    return c.json(await createCaller({ scope: "write" }).projects.get({ project }));
  } catch (error) {
    if (error instanceof TRPCError && error.code === "NOT_FOUND") {
      return c.json({ error: { code: "not_found", message: "Not found" } }, 404);
    }
    throw error;
  }
});

Deno.serve(
  { hostname: env.HOST ?? "127.0.0.1", port: Number(env.PORT ?? 8002), onListen: () => {} },
  app.fetch,
);

// Stopped with SIGTERM by the benchmark: exit so that `--cpu-prof` writes its profile.
Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
