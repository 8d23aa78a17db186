/**
 * `deno task bench:batches`: big tRPC batches from several clients at once. 5,200 probes in 52
 * projects, of which the first 200 (in list order) are ~400 KB each (45 header values of 8,000
 * characters and a 40,000-character body); then four clients each send, one after another for
 * 20 s, a batch of 50 `probes.list` calls without `limit` (a list past 1,000 items: refused, 422)
 * while another caller reads one probe by its key every 20 ms. Prints the server's RSS before,
 * at its peak and a minute after the load, the batches' statuses and times, and the other
 * caller's latency (p50, p99, max), alone for 5 s first (what the machine gives it) and during
 * the batches.
 *
 *   deno task bench:batches                        # both databases, this tree
 *   BENCH_DB=pglite deno task bench:batches        # one of them (pglite or postgres)
 *   BENCH_ENTRY=/tmp/base/server/main.ts deno task bench:batches   # another tree's server
 *   BENCH_BATCH_INPUT='{"limit":1000}'             # each call's input (default {})
 *   BENCH_STREAM=1                 # each client reads GET /api/v1/probes whole instead
 *
 * Environment: BENCH_CLIENTS (4), BENCH_CALLS (50), BENCH_SECONDS (20), BENCH_AFTER_SECONDS
 * (60), BENCH_DATABASE_URL (admin URL; default the local 127.0.0.1:5432).
 *
 * @module
 */
import { openDatabase } from "../server/storage/database.ts";
import { json } from "../server/storage/json.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { probeIdOf } from "../server/domain/probe_id.ts";
import { createPostgresDatabase } from "../server/testing/app.ts";
import { startServerProcess } from "../server/testing/process.ts";
import { BENCH_KEY, benchSettings, envNumber, loadNote, mib } from "./setup.ts";

const PROJECTS = 52;
const PROBES_PER_PROJECT = 100;
const BIG_PROBES = 200;
const CLIENTS = envNumber("BENCH_CLIENTS", 4);
const CALLS = envNumber("BENCH_CALLS", 50);
const SECONDS = envNumber("BENCH_SECONDS", 20);
const AFTER_SECONDS = envNumber("BENCH_AFTER_SECONDS", 60);
const CALL_INPUT = JSON.parse(Deno.env.get("BENCH_BATCH_INPUT") ?? "{}");
/** Each client reads the whole list of probes streamed (`GET /api/v1/probes`) instead. */
const STREAM = Deno.env.get("BENCH_STREAM") === "1";
const entry = Deno.env.get("BENCH_ENTRY");

const projectName = (p: number) => `p${String(p).padStart(3, "0")}`;
const urlOf = (i: number) => `https://t-${String(i).padStart(5, "0")}.example.com/`;

/** 5,200 probes; the first 200 of the list (projects p000 and p001) ~400 KB each. */
async function seed(db: Parameters<typeof migrateToLatest>[0]) {
  await migrateToLatest(db);
  const bigHeaders = Object.fromEntries(
    Array.from({ length: 45 }, (_, i) => [`x-h${i}`, "v".repeat(8000)]),
  );
  const bigBody = { note: "b".repeat(40_000) };
  for (let p = 0; p < PROJECTS; p++) {
    const project = projectName(p);
    await db.insertInto("projects").values({ name: project, label: null, description: null })
      .execute();
    // Ten rows a statement: a statement of 100 big rows would be 40 MB of text.
    for (let start = 0; start < PROBES_PER_PROJECT; start += 10) {
      await db.insertInto("probes").values(
        Array.from({ length: 10 }, (_, k) => {
          const i = p * PROBES_PER_PROJECT + start + k;
          const big = i < BIG_PROBES;
          return {
            project,
            probe_id: probeIdOf("GET", urlOf(i)),
            url: urlOf(i),
            method: "GET",
            headers: json(big ? bigHeaders : { accept: "application/json" }),
            body: big ? json(bigBody) : null,
            latency: 500,
          };
        }),
      ).execute();
    }
  }
}

const headers = { "x-service-api-key": BENCH_KEY };

/** Sends requests one after another until `until`, reading each to its end; statuses, times. */
async function client(requestUrl: string, until: number) {
  const statuses = new Map<string, number>();
  const times: number[] = [];
  while (performance.now() < until) {
    const started = performance.now();
    let status: string;
    try {
      const response = await fetch(requestUrl, { headers });
      await response.arrayBuffer();
      status = String(response.status);
    } catch (error) {
      status = `failed (${(error as Error).message.slice(0, 40)})`;
    }
    times.push(performance.now() - started);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  return { statuses, times };
}

/** Reads one small probe by its key every 20 ms until `done`; its latencies, sorted. */
async function otherCaller(url: string, done: () => boolean) {
  const path = `${url}/api/v1/projects/${projectName(PROJECTS - 1)}/probes/${
    probeIdOf("GET", urlOf(PROJECTS * PROBES_PER_PROJECT - 1))
  }`;
  const latencies: number[] = [];
  let failed = 0;
  while (!done()) {
    const started = performance.now();
    const response = await fetch(path, { headers }).catch(() => null);
    await response?.arrayBuffer();
    latencies.push(performance.now() - started);
    if (response?.status !== 200) failed++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(0);
  return `${latencies.length} reads, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${
    latencies.at(-1)!.toFixed(0)
  } ms, ${failed} not 200`;
}

async function run(backend: "pglite" | "postgres") {
  const dataDir = await Deno.makeTempDir({ prefix: "bench-batches-" });
  let databaseUrl = "";
  let drop = async () => {};
  if (backend === "postgres") {
    const database = await createPostgresDatabase(benchSettings().adminUrl, "probe_bench");
    databaseUrl = database.url;
    drop = database.drop;
  }
  try {
    const handle = await openDatabase(
      backend === "postgres"
        ? { kind: "postgres", url: databaseUrl }
        : { kind: "pglite", dataDir: `${dataDir}/pgdata` },
    );
    await seed(handle.db).finally(() => handle.close());
    const server = await startServerProcess({
      output: Deno.env.get("BENCH_OUTPUT") === "inherit" ? "inherit" : "null",
      ...(entry && { entry, cwd: new URL("..", `file://${entry}`).pathname }),
      env: {
        NODE_ENV: "production",
        DATABASE_URL: databaseUrl,
        SERVICE_API_KEY: BENCH_KEY,
        DATA_DIR: dataDir,
        RATE_LIMIT_PER_SECOND: "100000000",
        RUNNER: "off",
        LOG_LEVEL: "warn",
      },
    });
    try {
      const inputs = Object.fromEntries(Array.from({ length: CALLS }, (_, i) => [i, CALL_INPUT]));
      const requestUrl = STREAM
        ? `${server.url}/api/v1/probes`
        : `${server.url}/trpc/${Array(CALLS).fill("probes.list").join(",")}` +
          `?batch=1&input=${encodeURIComponent(JSON.stringify(inputs))}`;
      // Settles the server (its first reads compile) before its memory at rest is taken.
      await (await fetch(`${server.url}/api/v1/projects`, { headers })).arrayBuffer();
      // The other caller alone first: what this machine gives it now, without the batches.
      const quietUntil = performance.now() + 5000;
      const alone = await otherCaller(server.url, () => performance.now() > quietUntil);
      const before = await server.memory();
      let peak = before.rssKiB;
      const sampler = setInterval(async () => {
        peak = Math.max(peak, (await server.memory()).rssKiB);
      }, 100);
      const until = performance.now() + SECONDS * 1000;
      let over = false;
      const clients = Promise.all(
        Array.from({ length: CLIENTS }, () => client(requestUrl, until)),
      ).finally(() => over = true);
      const other = otherCaller(server.url, () => over);
      const results = await clients;
      const seen = await other;
      const ended = await server.memory();
      clearInterval(sampler);
      peak = Math.max(peak, ended.rssKiB);
      await new Promise((resolve) => setTimeout(resolve, AFTER_SECONDS * 1000));
      const after = await server.memory();
      const statuses = new Map<string, number>();
      const times = results.flatMap((r) => r.times).sort((a, b) => a - b);
      for (const r of results) {
        for (const [s, n] of r.statuses) statuses.set(s, (statuses.get(s) ?? 0) + n);
      }
      console.log(
        `${backend}: ${CLIENTS} clients x ${
          STREAM
            ? "GET /api/v1/probes (streamed whole)"
            : `batches of ${CALLS} probes.list ${JSON.stringify(CALL_INPUT)}`
        } for ${SECONDS} s: ${times.length} requests ${
          JSON.stringify(Object.fromEntries(statuses))
        }, ` +
          `time median ${times[Math.floor(times.length / 2)].toFixed(0)} ms, max ${
            times.at(-1)!.toFixed(0)
          } ms (the last ones end after ${SECONDS} s)`,
      );
      console.log(
        `${backend}: server RSS before ${mib(before.rssKiB)}, peak ${mib(peak)} (+${
          mib(peak - before.rssKiB)
        }), at the end ${mib(ended.rssKiB)}, ${AFTER_SECONDS} s later ${mib(after.rssKiB)} (+${
          mib(after.rssKiB - before.rssKiB)
        })`,
      );
      console.log(`${backend}: another caller's keyed read alone for 5 s first: ${alone}`);
      console.log(`${backend}: another caller's keyed read meanwhile: ${seen}`);
    } finally {
      await server.stop();
    }
  } finally {
    await drop();
    await Deno.remove(dataDir, { recursive: true });
  }
}

console.log(
  `${loadNote()}; ${PROJECTS * PROBES_PER_PROJECT} probes, ${BIG_PROBES} of ~400 KB; server: ${
    entry ?? "this tree"
  }`,
);
const chosen = Deno.env.get("BENCH_DB");
for (const backend of ["pglite", "postgres"] as const) {
  if (!chosen || chosen === backend) await run(backend);
}
