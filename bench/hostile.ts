/**
 * `deno task bench:hostile`: the server (`server/main.ts` as a subprocess) watching a hostile
 * JSON target (issue 18: 200 `application/json`, 1 MB of nested arrays) with 10 probes of 20
 * `expect.json` checks each, every 10 s; meanwhile `/healthz` and a keyed read
 * (`GET /api/v1/projects`) are timed one after the other, every 50 ms. Prints their latency
 * p50/p99/max, requests that failed, whether the server is still alive, and one probe's last
 * run.
 *
 *   deno task bench:hostile [--database pglite|postgres] [--duration 60] [--probes 10]
 *                           [--entry path/to/server/main.ts]
 *
 * `--probes 0` gives a baseline: the same server and sampling with nothing to run, so that what
 * the machine's other load costs can be told from what the probes cost. `--entry` runs another
 * checkout's server (say, main's, for the figure before a change).
 * BENCH_DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
 * the bench makes a database of its own there and drops it. Not a test: figures vary with the
 * machine and its load.
 */
import { parseArgs } from "node:util";
import { probesWithManyChecks, startHostileTarget } from "../server/testing/hostile_target.ts";
import { restCall, SERVER_ENTRY } from "../server/testing/process.ts";
import { startOn } from "./setup.ts";

const KEY = "bench-hostile-key-0123";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    database: { type: "string", default: "pglite" },
    duration: { type: "string", default: "60" },
    probes: { type: "string", default: "10" },
    entry: { type: "string", default: SERVER_ENTRY },
  },
});
const DURATION_MS = Number(args.duration) * 1000;

const target = await startHostileTarget();
const { server, close } = await startOn(args.database!, { entry: args.entry, key: KEY });
let exited: Deno.CommandStatus | null = null;
server.status.then((status) => exited = status);

console.log(
  `bench:hostile  database=${args.database} probes=${args.probes}×20 json checks ` +
    `interval=10s duration=${args.duration}s entry=${args.entry}`,
);
await restCall(server, KEY, "POST", "/projects", { project: "hostile" });
const probes = probesWithManyChecks(target.origin, Number(args.probes));
for (const probe of probes) {
  const created = await restCall(server, KEY, "POST", "/projects/hostile/probes", probe);
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.body}`);
}

const latencies = { healthz: [] as number[], keyed: [] as number[] };
/** The slowest answers, with when they came (s from the start): do they follow the runs? */
const slow: { kind: string; ms: number; at: number }[] = [];
const began = performance.now();
let failures = 0;
async function timed(kind: keyof typeof latencies, path: string, key?: string) {
  const started = performance.now();
  try {
    const response = await fetch(`${server.url}${path}`, {
      headers: key ? { "x-service-api-key": key } : {},
      signal: AbortSignal.timeout(30_000),
    });
    await response.arrayBuffer();
    if (!response.ok) failures++;
  } catch {
    failures++;
    return;
  }
  const ms = performance.now() - started;
  latencies[kind].push(ms);
  slow.push({ kind, ms, at: (started - began) / 1000 });
  slow.sort((a, b) => b.ms - a.ms).splice(5);
}

const end = performance.now() + DURATION_MS;
while (performance.now() < end && exited === null) {
  await timed("healthz", "/healthz");
  await timed("keyed", "/api/v1/projects", KEY);
  await new Promise((r) => setTimeout(r, 50));
}

const nearest = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : NaN;
const line = (name: string, values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1).padStart(8);
  console.log(
    `${name.padEnd(22)} n=${String(sorted.length).padStart(5)}  p50 ${f(nearest(sorted, 0.5))} ms` +
      `  p99 ${f(nearest(sorted, 0.99))} ms  max ${f(sorted.at(-1) ?? NaN)} ms`,
  );
};
line("GET /healthz", latencies.healthz);
line("GET /api/v1/projects", latencies.keyed);
console.log(`failed requests: ${failures}  target requests: ${target.hits()}`);
console.log(
  `slowest: ${
    slow.map((s) => `${s.kind} ${s.ms.toFixed(0)} ms at ${s.at.toFixed(1)} s`).join(", ")
  }`,
);
// A request that failed may have met a server that was exiting.
await Promise.race([server.status, new Promise((r) => setTimeout(r, 1000))]);
if (exited) {
  const status = exited as Deno.CommandStatus;
  console.log(`SERVER EXITED with code ${status.code} during the run; last output:`);
  console.log(server.output().split("\n").slice(-8).join("\n"));
} else if (probes.length === 0) {
  console.log("server alive; no probes (a baseline of the machine's load)");
} else {
  const list = await restCall(server, KEY, "GET", "/projects/hostile/probes");
  const probeId = list.body?.data?.[0]?.probe_id;
  const runs = await restCall(
    server,
    KEY,
    "GET",
    `/projects/hostile/probes/${probeId}/results?limit=1`,
  );
  const run = runs.body?.data?.[0];
  console.log(
    `server alive; a probe's last run: ${run?.outcome} ${JSON.stringify(run?.error)} ` +
      `first check ${JSON.stringify(run?.failed_checks?.[0])}`,
  );
}
await close();
await target.close();
