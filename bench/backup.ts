/**
 * What a backup of a running embedded instance costs the server: its resident memory while
 * `GET /backup` streams (sampled every 50 ms), the time the backup takes, and how long API
 * requests wait meanwhile. Prints figures; asserts nothing.
 *
 *   deno run -A bench/backup.ts [--results 100000] [--probes 100]
 */
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { startServerProcess } from "../server/testing/process.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { results: { type: "string" }, probes: { type: "string" } },
});
const RESULTS = Number(values.results ?? 100_000);
const PROBES = Number(values.probes ?? 100);
const KEY = "bench-backup-key";

const dataDir = await Deno.makeTempDir({ prefix: "bench-backup-" });
// The data is written before the server starts (the DATA_DIR is its alone once it runs).
const handle = await openDatabase({ kind: "pglite", dataDir: `${dataDir}/pgdata` });
await migrateToLatest(handle.db);
await sql`insert into projects (name) values ('bench')`.execute(handle.db);
await sql`insert into probes (project, probe_id, url, method, headers)
  select 'bench', 'p' || g, 'https://example.com/' || g, 'GET', '{}'::json
  from generate_series(1, ${PROBES}) g`.execute(handle.db);
await sql`insert into probe_results
    (probe_key, due_at, started_at, duration_ms, outcome, http_status, address, runner)
  select 1 + g % ${PROBES}, now() - g * interval '1 second', now() - g * interval '1 second',
         20 + g % 200, 'up', 200, '93.184.215.14', 'bench-runner'
  from generate_series(1, ${RESULTS}) g`.execute(handle.db);
await handle.close();

const server = await startServerProcess({
  env: { DATA_DIR: dataDir, SERVICE_API_KEY: KEY, RUNNER: "off", LOG_LEVEL: "warn" },
  readyTimeoutMs: 60_000,
});
try {
  await new Promise((r) => setTimeout(r, 2000));
  const idle = await server.memory();
  let peak = idle.rssKiB;
  let sampling = true;
  const samples: number[] = [];
  const sampler = (async () => {
    while (sampling) {
      const { rssKiB } = await server.memory();
      samples.push(rssKiB);
      peak = Math.max(peak, rssKiB);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  // An API read every 50 ms while the backup streams: the longest it waited.
  let longestMs = 0;
  let reads = 0;
  const reader = (async () => {
    while (sampling) {
      const started = performance.now();
      const res = await fetch(`${server.url}/api/v1/projects`, {
        headers: { "x-service-api-key": KEY },
      });
      await res.body?.cancel();
      longestMs = Math.max(longestMs, performance.now() - started);
      reads++;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const started = performance.now();
  const res = await fetch(`${server.url}/backup`, { headers: { "x-service-api-key": KEY } });
  let bytes = 0;
  let tail = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) {
    bytes += chunk.byteLength;
    tail = (tail + decoder.decode(chunk, { stream: true })).slice(-4096);
  }
  const rows = JSON.parse(tail.trimEnd().split("\n").at(-1)!).end.rows.probe_results;
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await Promise.all([sampler, reader]);
  const after = await server.memory();
  const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
  console.log(
    `results ${RESULTS} (${rows} in the backup), probes ${PROBES}: backup ${
      (bytes / 2 ** 20).toFixed(1)
    } MiB in ${seconds.toFixed(1)} s`,
  );
  console.log(
    `server RSS: before ${mib(idle.rssKiB)}, peak during ${mib(peak)}, after ${mib(after.rssKiB)}` +
      ` (${samples.length} samples)`,
  );
  console.log(`API reads during the backup: ${reads}, the longest ${longestMs.toFixed(0)} ms`);
} finally {
  await server.stop();
  await Deno.remove(dataDir, { recursive: true });
}
