/**
 * Big answers (issue 18): a project of 1,000 probes with 5 header values of 1,000 characters,
 * then one tRPC batch of 50 `probes.listByProject` calls, then three such batches at once while
 * another caller reads `/healthz` and a keyed probe every 50 ms. Prints each batch's status and
 * size, the server's RSS before and after (and its peak), and the other caller's latency.
 *
 *   deno task bench:answers                       # PostgreSQL (BENCH_DATABASE_URL), this tree
 *   BENCH_DB=pglite deno task bench:answers       # the embedded database
 *   BENCH_ENTRY=/work/main/server/main.ts deno task bench:answers   # another tree's server
 *   BENCH_HEADER_CHARS=4800 BENCH_CALLS=25                       # the 24 KB probes
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

const PROBES = envNumber("BENCH_PROBES", 1000);
const CALLS = envNumber("BENCH_CALLS", 50);
/** Characters of each of a probe's 5 header values (4,800 makes the 24 KB probes). */
const HEADER_CHARS = envNumber("BENCH_HEADER_CHARS", 1000);
const PROJECT = "big";
const backend = Deno.env.get("BENCH_DB") === "pglite" ? "pglite" : "postgres";
const entry = Deno.env.get("BENCH_ENTRY");

async function seedBig(db: Parameters<typeof migrateToLatest>[0]) {
  await migrateToLatest(db);
  await db.insertInto("projects").values({ name: PROJECT, label: "Big", description: null })
    .execute();
  const headers = Object.fromEntries(
    Array.from({ length: 5 }, (_, i) => [`x-h${i}`, "v".repeat(HEADER_CHARS)]),
  );
  for (let start = 0; start < PROBES; start += 100) {
    await db.insertInto("probes").values(
      Array.from({ length: Math.min(100, PROBES - start) }, (_, k) => {
        const url = `https://t-${start + k}.example.com/`;
        return {
          project: PROJECT,
          probe_id: probeIdOf("GET", url),
          url,
          method: "GET",
          headers: json(headers),
          body: null,
          latency: 500,
        };
      }),
    ).execute();
  }
}

const dataDir = await Deno.makeTempDir({ prefix: "bench-answers-" });
let databaseUrl: string | undefined;
let drop = async () => {};
if (backend === "postgres") {
  const database = await createPostgresDatabase(benchSettings().adminUrl, "probe_bench");
  databaseUrl = database.url;
  drop = database.drop;
  const handle = await openDatabase({ kind: "postgres", url: database.url });
  await seedBig(handle.db).finally(() => handle.close());
} else {
  const handle = await openDatabase({ kind: "pglite", dataDir: `${dataDir}/pgdata` });
  await seedBig(handle.db).finally(() => handle.close());
}

const server = await startServerProcess({
  output: Deno.env.get("BENCH_OUTPUT") === "inherit" ? "inherit" : "null",
  ...(entry && { entry, cwd: new URL("..", `file://${entry}`).pathname }),
  env: {
    NODE_ENV: "production",
    ...(databaseUrl && { DATABASE_URL: databaseUrl }),
    SERVICE_API_KEY: BENCH_KEY,
    DATA_DIR: dataDir,
    RATE_LIMIT_PER_SECOND: "100000000",
    RUNNER: "off",
    LOG_LEVEL: "warn",
  },
});

const headers = { "x-service-api-key": BENCH_KEY };
const input = JSON.stringify(
  Object.fromEntries(Array.from({ length: CALLS }, (_, i) => [i, { project: PROJECT }])),
);
const batchUrl = `${server.url}/trpc/${Array(CALLS).fill("probes.listByProject").join(",")}` +
  `?batch=1&input=${encodeURIComponent(input)}`;

async function batch(): Promise<string> {
  const started = performance.now();
  try {
    const response = await fetch(batchUrl, { headers });
    const bytes = (await response.arrayBuffer()).byteLength;
    const ms = performance.now() - started;
    return `${response.status}, ${(bytes / 1e6).toFixed(1)} MB in ${ms.toFixed(0)} ms`;
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}

/** Reads `/healthz` and a keyed page of probes every 50 ms until `done` resolves. */
async function others(done: Promise<unknown>) {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let over = false;
  done.then(() => over = true);
  while (!over) {
    for (const path of ["/healthz", `/api/v1/projects/${PROJECT}/probes?limit=1`]) {
      const started = performance.now();
      const response = await fetch(`${server.url}${path}`, { headers }).catch(() => null);
      await response?.arrayBuffer();
      latencies.push(performance.now() - started);
      const status = response?.status ?? 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return `${latencies.length} requests, p50 ${at(0.5).toFixed(0)} ms, p99 ${
    at(0.99).toFixed(0)
  } ms, ` +
    `max ${latencies.at(-1)!.toFixed(0)} ms, statuses ${
      JSON.stringify(Object.fromEntries(statuses))
    }`;
}

try {
  console.log(
    `${loadNote()}; ${backend}; ${PROBES} probes with 5 headers of ${HEADER_CHARS} characters; ` +
      `batches of ${CALLS} calls`,
  );
  console.log(`server: ${entry ?? "this tree"}`);
  const before = await server.memory();
  console.log(`RSS at rest: ${mib(before.rssKiB)}`);
  console.log(`one batch: ${await batch()}`);
  const one = await server.memory();
  console.log(`RSS after one batch: ${mib(one.rssKiB)} (peak ${mib(one.peakKiB)})`);
  const three = Promise.all([batch(), batch(), batch()]);
  const seen = await others(three);
  console.log(`three at once: ${(await three).join(" / ")}`);
  console.log(`others meanwhile: ${seen}`);
  const after = await server.memory();
  console.log(`RSS after three: ${mib(after.rssKiB)} (peak ${mib(after.peakKiB)})`);
} finally {
  await server.stop();
  await drop();
  await Deno.remove(dataDir, { recursive: true });
}
