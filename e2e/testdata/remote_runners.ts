/**
 * What the remote runner end-to-end files share (`remote_runner_test.ts`,
 * `remote_runner_cut_test.ts`): the service on PostgreSQL, runners as processes, a location of
 * probes, and the results as recorded.
 *
 * @module
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { type Db, openDatabase } from "../../server/storage/database.ts";
import { createPostgresDatabase, uniqueName } from "../../server/testing/app.ts";
import { restCall, type ServerProcess, startServerProcess } from "../../server/testing/process.ts";
import { startTarget, type Target } from "../../server/testing/target_server.ts";

export const REMOTE_ENTRY = new URL("../../server/runner/remote/main.ts", import.meta.url).pathname;
export const KEY = "e2e-remote-key-0123456789";
/** PostgreSQL only: the tests read the results' due times. */
export const ignore = !Deno.env.get("TEST_DATABASE_URL");

/** Polls `check` until it holds; fails with `what` after `ms` (a bound, not a timing claim). */
export async function until(what: string, check: () => Promise<boolean>, ms = 90_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/** A remote runner (`deno task runner:remote`) of the location `token` opens, as `id`. */
export function remote(serviceUrl: string, token: string, id: string): Promise<ServerProcess> {
  return startServerProcess({
    entry: REMOTE_ENTRY,
    env: {
      SERVICE_URL: serviceUrl,
      LOCATION_TOKEN: token,
      RUNNER_ID: id,
      PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
      LOG_LEVEL: "info",
    },
    waitReady: false,
    output: "capture",
  });
}

/** A location with a project of `count` probes of `target` (10 s apart) that run there only. */
export async function place(
  service: ServerProcess,
  target: Target,
  count: number,
  timeoutMs?: number,
) {
  const location = uniqueName("loc");
  const made = await restCall(service, KEY, "POST", "/locations", { name: location });
  assert.equal(made.status, 201);
  const project = uniqueName();
  assert.equal((await restCall(service, KEY, "POST", "/projects", { project })).status, 201);
  for (let i = 0; i < count; i++) {
    const res = await restCall(service, KEY, "POST", `/projects/${project}/probes`, {
      url: `${target.origin}/${location}/${i}`,
      interval_seconds: 10,
      locations: [location],
      ...(timeoutMs && { timeout_ms: timeoutMs }),
    });
    assert.equal(res.status, 201);
  }
  return { location, token: made.body.data.token as string, project };
}

export interface Row {
  probe_key: string;
  due: number;
  started: number;
  runner: string;
  url: string;
}

export async function recorded(db: Db, location: string): Promise<Row[]> {
  const { rows } = await sql<
    { probe_key: string; due_at: Date; started_at: Date; runner: string; url: string }
  >`
    select r.probe_key::text, r.due_at, r.started_at, r.runner, p.url
    from probe_results r join probes p on p.key = r.probe_key
    where r.location = ${location} order by r.due_at`.execute(db);
  return rows.map((r) => ({
    probe_key: r.probe_key,
    due: new Date(r.due_at).getTime(),
    started: new Date(r.started_at).getTime(),
    runner: r.runner,
    url: r.url,
  }));
}

export function assertOnce(rows: Row[]) {
  const seen = new Set<string>();
  for (const r of rows) {
    const id = `${r.probe_key}@${r.due}`;
    assert.ok(!seen.has(id), `run ${id} recorded twice`);
    seen.add(id);
  }
}

/** Target hits per probe URL path. */
export const hitsOf = (target: Target, location: string) => {
  const hits = new Map<string, number>();
  for (const h of target.hits) {
    if (h.path.startsWith(`/${location}/`)) hits.set(h.path, (hits.get(h.path) ?? 0) + 1);
  }
  return hits;
};

export const resultsPerPath = (rows: Row[]) => {
  const per = new Map<string, number>();
  for (const r of rows) {
    const path = new URL(r.url).pathname;
    per.set(path, (per.get(path) ?? 0) + 1);
  }
  return per;
};

/**
 * Runs `fn` with the service as `deno task start` runs it, on a PostgreSQL database of its own,
 * a handle on that database and a target; ends them after.
 */
export async function withService(
  fn: (s: { service: ServerProcess; db: Db; target: Target }) => Promise<void>,
): Promise<void> {
  const database = await createPostgresDatabase(undefined, "probe_remote");
  const dataDir = await Deno.makeTempDir({ prefix: "remote-runner-" });
  const service = await startServerProcess({
    env: {
      DATABASE_URL: database.url,
      SERVICE_API_KEY: KEY,
      DATA_DIR: dataDir,
      PROBE_TIMEOUT_MS: "1000",
      LOG_LEVEL: "warn",
    },
    output: "capture",
  });
  const handle = await openDatabase({ kind: "postgres", url: database.url });
  const db = handle.db;
  const target = await startTarget();
  try {
    await fn({ service, db, target });
  } finally {
    await target.close();
    await service.stop();
    await handle.close();
    await database.drop();
    await Deno.remove(dataDir, { recursive: true });
  }
}
