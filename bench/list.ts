/**
 * `deno task bench:list`: the whole list of a project of 100,000 probes
 * (`GET /api/v1/projects/{project}/probes`), read over loopback from a server process on each
 * database. Prints the answer's size and time, and the server's resident memory before the list
 * and at its peak during it: streamed page by page, the peak stays near the idle figure instead
 * of growing with the list.
 *
 * Environment: LIST_PROBES (100000), BENCH_DATABASE_URL (admin URL; default the local
 * 127.0.0.1:5432), LIST_BACKENDS (`pglite,postgres`).
 */
import { sql } from "kysely";
import { type Db, openDatabase } from "../server/storage/database.ts";
import { createPostgresDatabase } from "../server/testing/app.ts";
import type { ServerProcess } from "../server/testing/process.ts";
import { BENCH_KEY, benchSettings, envNumber, mib, startService } from "./setup.ts";

const PROBES = envNumber("LIST_PROBES", 100_000);
const PROJECT = "big";
const headers = { "x-service-api-key": BENCH_KEY, "content-type": "application/json" };

async function createProject(service: ServerProcess) {
  const res = await fetch(`${service.url}/api/v1/projects`, {
    method: "POST",
    headers,
    body: JSON.stringify({ project: PROJECT }),
  });
  await res.body?.cancel();
  if (res.status !== 201) throw new Error(`creating the project answered ${res.status}`);
}

/** Stores the probes in one statement (through the API this would take minutes). */
async function fill(db: Db) {
  await sql`insert into probes (project, probe_id, url, method, headers)
    select ${PROJECT}, md5(i::text), 'https://target-' || i || '.example.com/health', 'GET',
      '{}'::json
    from generate_series(1, ${PROBES}) as i`.execute(db);
}

/** Reads the list to its end, counting bytes and checking the count; keeps none of it. */
async function readList(service: ServerProcess) {
  const started = performance.now();
  const res = await fetch(`${service.url}/api/v1/projects/${PROJECT}/probes`, { headers });
  if (res.status !== 200) throw new Error(`the list answered ${res.status}`);
  const reader = res.body!.getReader();
  let bytes = 0;
  let tail = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    tail = (tail + new TextDecoder().decode(value.slice(-80))).slice(-80);
  }
  const count = Number(/"count":(\d+)/.exec(tail)?.[1]);
  if (count !== PROBES) throw new Error(`the list counted ${count}, not ${PROBES}`);
  return { bytes, ms: performance.now() - started };
}

async function measure(backend: string, service: ServerProcess) {
  const idle = await service.memory();
  let peak = idle.rssKiB;
  const sampler = setInterval(async () => {
    peak = Math.max(peak, (await service.memory()).rssKiB);
  }, 20);
  try {
    const { bytes, ms } = await readList(service);
    peak = Math.max(peak, (await service.memory()).rssKiB);
    console.log(
      `${backend.padEnd(9)} ${PROBES} probes, ${(bytes / 2 ** 20).toFixed(1)} MiB in ` +
        `${(ms / 1000).toFixed(2)} s; server RSS before ${mib(idle.rssKiB)}, ` +
        `peak during the list ${mib(peak)} (+${mib(peak - idle.rssKiB)})`,
    );
  } finally {
    clearInterval(sampler);
  }
}

async function onPostgres() {
  const database = await createPostgresDatabase(benchSettings().adminUrl, "probe_bench");
  const dataDir = await Deno.makeTempDir({ prefix: "probe-list-" });
  const service = await startService({ databaseUrl: database.url, poolSize: 10, dataDir });
  const handle = await openDatabase({ kind: "postgres", url: database.url });
  try {
    await createProject(service);
    await fill(handle.db);
    await measure("postgres", service);
  } finally {
    await handle.close();
    await service.stop();
    await database.drop();
    await Deno.remove(dataDir, { recursive: true });
  }
}

async function onPglite() {
  const dataDir = await Deno.makeTempDir({ prefix: "probe-list-" });
  // The first start creates and migrates the database; the probes are stored while no server
  // holds it (one process per data folder), then the server starts again on them.
  const first = await startService({ databaseUrl: "", poolSize: 10, dataDir });
  try {
    await createProject(first);
  } finally {
    await first.stop();
  }
  const handle = await openDatabase({ kind: "pglite", dataDir: `${dataDir}/pgdata` });
  try {
    await fill(handle.db);
  } finally {
    await handle.close();
  }
  const service = await startService({ databaseUrl: "", poolSize: 10, dataDir });
  try {
    await measure("pglite", service);
  } finally {
    await service.stop();
    await Deno.remove(dataDir, { recursive: true });
  }
}

const backends = (Deno.env.get("LIST_BACKENDS") ?? "pglite,postgres").split(",");
if (backends.includes("pglite")) await onPglite();
if (backends.includes("postgres")) await onPostgres();
