/**
 * What the heartbeat benchmarks (`pings.ts`, `heartbeat_deadline.ts`) share: the database they
 * run on (embedded by default; PostgreSQL with `--database postgres` or when `DATABASE_URL` is
 * set, in a database of their own on that server, dropped afterwards), service processes over it,
 * and heartbeats made through the REST interface.
 */
import { createPostgresDatabase } from "../server/testing/app.ts";
import { restCall, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { startTaskOf } from "./setup.ts";

export const KEY = "bench-heartbeat-key-0123456789";
/** The V8 flags of `deno task start`, if it gives any. */
const { v8Flags } = startTaskOf();
const V8_FLAGS = v8Flags ? [`--v8-flags=${v8Flags}`] : [];
const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";

export type DatabaseKind = "embedded" | "postgres";

/**
 * The database a run uses: `--database` when given, else PostgreSQL when `DATABASE_URL` is set,
 * else embedded; the PostgreSQL server is `DATABASE_URL`'s, else `BENCH_DATABASE_URL`'s, else
 * the local one.
 */
export function databaseChoice(flag: string | undefined): { kind: DatabaseKind; adminUrl: string } {
  const fromEnv = Deno.env.get("DATABASE_URL") || undefined;
  const kind = flag ?? (fromEnv ? "postgres" : "embedded");
  if (kind !== "embedded" && kind !== "postgres") {
    throw new Error(`--database is embedded or postgres, not ${kind}`);
  }
  return {
    kind,
    adminUrl: fromEnv ?? Deno.env.get("BENCH_DATABASE_URL") ?? DEFAULT_ADMIN_URL,
  };
}

export interface Services {
  servers: ServerProcess[];
  /** `embedded` or the PostgreSQL database's host and name. */
  where: string;
  /** The PostgreSQL database, for `watchCpu`'s backends; absent on the embedded one. */
  postgres?: { adminUrl: string; database: string };
  close(): Promise<void>;
}

/**
 * `instances` service processes (`server/main.ts` as `deno task start` runs it) over one
 * database of their own: the embedded one (one instance only) or a new PostgreSQL database.
 */
export async function startServices(
  { kind, adminUrl }: { kind: DatabaseKind; adminUrl: string },
  { instances = 1, env = {} }: { instances?: number; env?: Record<string, string> } = {},
): Promise<Services> {
  if (kind === "embedded" && instances > 1) {
    throw new Error("the embedded database has one service instance: --database postgres");
  }
  const pg = kind === "postgres"
    ? await createPostgresDatabase(adminUrl, "bench_heartbeats")
    : null;
  const dataDirs: string[] = [];
  const servers: ServerProcess[] = [];
  const close = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await pg?.drop();
    for (const dir of dataDirs) await Deno.remove(dir, { recursive: true });
  };
  try {
    for (let i = 0; i < instances; i++) {
      const dataDir = await Deno.makeTempDir({ prefix: "bench-heartbeats-" });
      dataDirs.push(dataDir);
      servers.push(
        await startServerProcess({
          env: {
            NODE_ENV: "production",
            SERVICE_API_KEY: KEY,
            DATA_DIR: dataDir,
            DATABASE_URL: pg?.url ?? "",
            RATE_LIMIT_PER_SECOND: "0",
            PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
            LOG_LEVEL: "warn",
            ...env,
          },
          // As `deno task start` runs it.
          denoFlags: V8_FLAGS,
          output: "capture",
          readyTimeoutMs: 120_000,
        }),
      );
    }
  } catch (error) {
    await close();
    throw error;
  }
  if (!pg) return { servers, where: "embedded", close };
  const { host, pathname } = new URL(pg.url);
  return {
    servers,
    where: `PostgreSQL ${host}${pathname}`,
    postgres: { adminUrl, database: pathname.slice(1) },
    close,
  };
}

export interface MadeHeartbeat {
  project: string;
  name: string;
  probe_id: string;
  ping_url: string;
  next_deadline: string | null;
}

/** Makes a project through `POST /projects`. */
export async function makeProject(server: ServerProcess, project: string): Promise<void> {
  const made = await restCall(server, KEY, "POST", "/projects", { project });
  if (made.status !== 201) throw new Error(`project: ${made.status} ${JSON.stringify(made.body)}`);
}

/** Makes a heartbeat through `POST /projects/{project}/heartbeats`; answers it as read. */
export async function makeHeartbeat(
  server: ServerProcess,
  project: string,
  body: Record<string, unknown>,
): Promise<MadeHeartbeat> {
  const res = await restCall(server, KEY, "POST", `/projects/${project}/heartbeats`, body);
  if (res.status !== 201) {
    throw new Error(`heartbeat ${body.name}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data;
}

/**
 * Makes `count` heartbeats (`job-<i>`), `perProject` to a project (`<prefix>-<n>`, made first),
 * `concurrency` requests at a time; `body(i)` gives each one's timing fields.
 */
export async function makeHeartbeats(
  server: ServerProcess,
  { count, perProject, concurrency = 8, prefix = "hb", body }: {
    count: number;
    perProject: number;
    concurrency?: number;
    prefix?: string;
    body: (i: number) => Record<string, unknown>;
  },
): Promise<MadeHeartbeat[]> {
  const projects = Math.ceil(count / perProject);
  for (let p = 0; p < projects; p++) await makeProject(server, `${prefix}-${p}`);
  const made: MadeHeartbeat[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const project = `${prefix}-${Math.floor(i / perProject)}`;
      made[i] = await makeHeartbeat(server, project, { name: `job-${i}`, ...body(i) });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return made;
}

/** Every heartbeat of the projects `prefix-0` … as the REST list reads them. */
export async function listHeartbeats(
  server: ServerProcess,
  { projects, prefix = "hb" }: { projects: number; prefix?: string },
): Promise<{ name: string; probe_id: string; pings_total: number; state: string }[]> {
  const all = [];
  for (let p = 0; p < projects; p++) {
    const res = await restCall(server, KEY, "GET", `/projects/${prefix}-${p}/heartbeats`);
    if (res.status !== 200) throw new Error(`list: ${res.status} ${JSON.stringify(res.body)}`);
    all.push(...res.body.data);
  }
  return all;
}

/** Sorted figures' quantile (nearest rank). */
export const nearest = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : NaN;
