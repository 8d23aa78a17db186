/**
 * `deno task bench:claim-flood`: one location token's claim flood. The server (`server/main.ts`
 * as a subprocess, its built-in runner on, running local probes every 10 s against a local
 * target) gets a remote location with nothing due; then N long-poll claims (`wait_seconds` 25 by
 * default, each under a runner name of its own) are sent at once with the location's token, from
 * a thread of their own (`claim_flood_worker.ts`).
 * Meanwhile another caller's keyed read (`GET /api/v1/projects/{project}`, with an API key) is
 * timed every 50 ms. Prints that read's p50/p99/max before and during the flood, how the claims
 * were answered (status, time to answer, `Retry-After`), the built-in runner's failures to record
 * (`recording runs failed` in the log) and the `runners` the location then reads.
 *
 *   deno task bench:claim-flood [--database pglite|postgres|both] [--claims 2000] [--wait 25]
 *                               [--before 5] [--entry path/to/server/main.ts]
 *
 * `--entry` runs another checkout's server (main's, for the figures before a change).
 * BENCH_DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
 * the bench makes a database of its own there and drops it. Not a test: figures vary with the
 * machine and its load.
 */
import { parseArgs } from "node:util";
import { restCall, SERVER_ENTRY, type ServerProcess } from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { speedNote, startOn } from "./setup.ts";
import type { ClaimAnswer, Flood } from "./claim_flood_worker.ts";

const KEY = "bench-flood-key-0123456789";
const PROJECT = "flood-bench";
const LOCATION = "flood";
/** A claim not answered by then counts as "no answer". */
const CLAIM_GIVE_UP_MS = 60_000;
const LOCAL_PROBES = 20;

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    database: { type: "string", default: "both" },
    claims: { type: "string", default: "2000" },
    wait: { type: "string", default: "25" },
    before: { type: "string", default: "5" },
    entry: { type: "string", default: SERVER_ENTRY },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  console.log(`deno task bench:claim-flood [--database pglite|postgres|both] [--claims 2000]
                            [--wait 25] [--before 5] [--entry path/to/server/main.ts]`);
  Deno.exit(0);
}
const databases = args.database === "both" ? ["pglite", "postgres"] : [args.database!];
const CLAIMS = Number(args.claims);
const WAIT_S = Number(args.wait);
const BEFORE_MS = Number(args.before) * 1000;

const nearest = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : NaN;
const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;
function spread(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `n=${sorted.length} p50 ${ms(nearest(sorted, 0.5))} p99 ${ms(nearest(sorted, 0.99))} ` +
    `max ${ms(sorted.at(-1) ?? NaN)}`;
}
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/** Another caller's keyed read, timed every 50 ms until `stop` says so. */
async function sampleReads(server: ServerProcess, stop: () => boolean) {
  const latencies: number[] = [];
  let failed = 0;
  while (!stop()) {
    const started = performance.now();
    try {
      const response = await fetch(`${server.url}/api/v1/projects/${PROJECT}`, {
        headers: { "x-service-api-key": KEY },
        signal: AbortSignal.timeout(CLAIM_GIVE_UP_MS),
      });
      await response.arrayBuffer();
      if (response.ok) latencies.push(performance.now() - started);
      else failed++;
    } catch {
      failed++;
    }
    await sleep(50);
  }
  return { latencies, failed };
}

/** The claims sent at once from a thread of their own (`claim_flood_worker.ts`). */
function sendFlood(flood: Flood): Promise<ClaimAnswer[]> {
  const worker = new Worker(new URL("./claim_flood_worker.ts", import.meta.url), {
    type: "module",
  });
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<ClaimAnswer[]>) => resolve(event.data);
    worker.onerror = (event) => reject(event.error ?? new Error(event.message));
    worker.postMessage(flood);
  });
}

async function flood(database: string) {
  const target = await startTarget({ countOnly: true });
  const { server, close } = await startOn(database, { entry: args.entry, key: KEY });
  try {
    await restCall(server, KEY, "POST", "/projects", { project: PROJECT });
    for (let i = 0; i < LOCAL_PROBES; i++) {
      const made = await restCall(server, KEY, "POST", `/projects/${PROJECT}/probes`, {
        url: `${target.origin}/p/${i}`,
      });
      if (made.status !== 201) {
        throw new Error(`probe: ${made.status} ${JSON.stringify(made.body)}`);
      }
    }
    const location = await restCall(server, KEY, "POST", "/locations", { name: LOCATION });
    const token = location.body.data.token as string;

    let phase: "before" | "during" | "done" = "before";
    const before = sampleReads(server, () => phase !== "before");
    await sleep(BEFORE_MS);
    phase = "during";
    const during = sampleReads(server, () => phase === "done");
    const began = performance.now();
    const cpuBefore = await server.cpuSeconds();
    const answers = await sendFlood({
      url: server.url,
      token,
      claims: CLAIMS,
      waitSeconds: WAIT_S,
      giveUpMs: CLAIM_GIVE_UP_MS,
    });
    const floodMs = performance.now() - began;
    const cpuMs = (await server.cpuSeconds() - cpuBefore) * 1000;
    phase = "done";
    const reads = { before: await before, during: await during };
    const runners = (await restCall(server, KEY, "GET", `/locations/${LOCATION}`)).body.data
      ?.runners;
    const failedRecording = server.lines.filter((l) => l.text.includes("recording runs failed"));
    // What the server logged as errors, once each (its messages and the errors' own).
    const errors = new Map<string, number>();
    for (const { text } of server.lines) {
      if (!text.includes('"error"')) continue;
      const said = text.match(/"(msg|message|error)":"([^"]*)"/g)?.join(" ") ?? text.slice(0, 200);
      errors.set(said, (errors.get(said) ?? 0) + 1);
    }

    const label = `[${database}]`;
    console.log(
      `${label} reads before:  ${spread(reads.before.latencies)} failed ${reads.before.failed}`,
    );
    console.log(
      `${label} reads during:  ${spread(reads.during.latencies)} failed ${reads.during.failed}`,
    );
    const byStatus = new Map<string, ClaimAnswer[]>();
    for (const a of answers) {
      const key = `${a.status}${a.code ? ` ${a.code}` : ""}`;
      byStatus.set(key, [...byStatus.get(key) ?? [], a]);
    }
    console.log(
      `${label} ${CLAIMS} claims (wait_seconds ${WAIT_S}), all answered in ${ms(floodMs)}, ` +
        `the server's CPU meanwhile ${ms(cpuMs)} (${
          (cpuMs * 1000 / CLAIMS).toFixed(0)
        } µs a claim):`,
    );
    for (const [status, list] of [...byStatus].sort()) {
      const retry = list.filter((a) => a.retryAfter).length;
      console.log(
        `${label}   ${status.padEnd(22)} ${spread(list.map((a) => a.ms))}` +
          (status.startsWith("429") ? `  Retry-After on ${retry}` : ""),
      );
    }
    console.log(
      `${label} built-in runner "recording runs failed": ${failedRecording.length}; ` +
        `target hits ${[...target.counts.values()].reduce((a, b) => a + b, 0)}; ` +
        `location runners: ${runners}`,
    );
    for (const [said, n] of errors) console.log(`${label} server error ×${n}: ${said}`);
  } finally {
    await close();
    await target.close();
  }
}

console.log(await speedNote());
console.log(`bench:claim-flood  claims=${CLAIMS} wait=${WAIT_S}s entry=${args.entry}`);
for (const database of databases) await flood(database);
