/**
 * The benchmark's baseline, not part of the product: a bare `Deno.serve` handler that checks the
 * key and runs the same SQL through postgres.js for each benchmarked route, answering the same
 * JSON. What the product costs on top of this is what the benchmark measures.
 *
 * With HELLO it answers "hello" to everything instead, and nothing else: `HELLO=deno` through a
 * bare `Deno.serve`, `HELLO=layer` through the service's connection layer
 * (`server/edge/serve.ts`, default limits), to tell the layer's own cost from the service's.
 *
 * Environment: DATABASE_URL, SERVICE_API_KEY, PORT, HOST, DATABASE_POOL_SIZE, HELLO.
 */
import { createHash } from "node:crypto";
import postgres from "postgres";

const env = Deno.env.toObject();
const key = env.SERVICE_API_KEY;
const sql = postgres(env.DATABASE_URL, {
  max: Number(env.DATABASE_POOL_SIZE ?? 10),
  onnotice: () => {},
});

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const notFound = () => json(404, { error: { code: "not_found", message: "Not found" } });

async function getProject(name: string) {
  const [row] = await sql`select name as project, label, description, status
    from projects where name = ${name}`;
  return row;
}

function listProbes(project: string) {
  return sql`select project, probe_id, url, method, headers, body, latency
    from probes where project = ${project} order by url collate "C"`;
}

async function writeProbe(project: string, body: { url: string; method?: string }) {
  const method = body.method ?? "GET";
  const id = createHash("sha256").update(`${method} ${body.url}`).digest("hex").slice(0, 16);
  return await sql.begin(async (tx) => {
    const [owner] = await tx`select name from projects where name = ${project} for share`;
    if (!owner) return null;
    const [row] = await tx`insert into probes (project, probe_id, url, method, headers, body)
      values (${project}, ${id}, ${body.url}, ${method}, '{}'::json, null)
      on conflict (project, url) do update set probe_id = excluded.probe_id,
        method = excluded.method, headers = excluded.headers, body = excluded.body,
        latency = excluded.latency, updated_at = now()
      returning project, url, probe_id, xmax = 0 as inserted`;
    return row;
  });
}

async function handle(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === "/healthz") return json(200, { status: "ok" });
  if (request.headers.get("x-service-api-key") !== key) {
    return json(401, { error: { code: "unauthorized", message: "Unauthorized" } });
  }
  const parts = url.pathname.split("/").map(decodeURIComponent);
  // /api/v1/projects/{project}[/probes]
  if (parts[1] === "api" && parts[3] === "projects" && parts[4]) {
    if (parts.length === 5 && request.method === "GET") {
      const row = await getProject(parts[4]);
      return row ? json(200, { data: row }) : notFound();
    }
    if (parts.length === 6 && parts[5] === "probes") {
      if (request.method === "GET") {
        const rows = await listProbes(parts[4]);
        return json(200, { data: rows, meta: { count: rows.length } });
      }
      if (request.method === "POST") {
        const row = await writeProbe(parts[4], await request.json());
        if (!row) return notFound();
        const { inserted, ...data } = row;
        return json(inserted ? 201 : 200, { data, meta: { created: inserted } });
      }
    }
  }
  if (url.pathname === "/api/v1/probes" && request.method === "GET") {
    const rows = await listProbes(url.searchParams.get("project") ?? "");
    return json(200, { data: rows, meta: { count: rows.length } });
  }
  if (url.pathname === "/trpc/projects.get" && request.method === "GET") {
    const input = JSON.parse(url.searchParams.get("input") ?? "{}");
    const row = await getProject(input.project);
    return row ? json(200, { result: { data: { data: row } } }) : notFound();
  }
  return notFound();
}

const hostname = env.HOST ?? "127.0.0.1";
const port = Number(env.PORT ?? 8001);
const hello = () => new Response("hello");
if (env.HELLO === "layer") {
  const { serve } = await import("../server/edge/serve.ts");
  await serve({ hostname, port, handler: hello });
} else {
  Deno.serve({ hostname, port, onListen: () => {} }, env.HELLO === "deno" ? hello : handle);
}
