/**
 * `deno task bench:pings`: heartbeat pings under load. The service (`server/main.ts` as `deno
 * task start` runs it) gets `--heartbeats` heartbeats (1,000; periods of an hour, so none misses a
 * deadline meanwhile), each pinged once (up, as a job's heartbeat is between state changes); a
 * load generator in a process of its own (`ping_load.ts`) sends `GET`
 * pings at their ping URLs, in turn, on `--connections` connections (32) without pause, for
 * `--warmup` seconds (3) and then `--seconds` (20). Prints the pings accepted a second, their
 * latency (p50, p99, max), the answers by status, whether the count the database holds (the
 * heartbeats' `pings_total`) equals the pings answered 200 (the priming ones too), and the CPU
 * of each process: the service's threads, the generator, PostgreSQL's backends.
 *
 *   deno task bench:pings [--heartbeats 1000] [--connections 32] [--seconds 20] [--warmup 3]
 *                         [--database embedded|postgres]
 *
 * On the embedded database by default; on PostgreSQL with `--database postgres` or when
 * `DATABASE_URL` is set (a database of the bench's own on that server, dropped afterwards;
 * `BENCH_DATABASE_URL` names the server otherwise). Targets: 3,000 pings a second or more with
 * p99 under 25 ms. Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import { cpuSecondsOf, startServerProcess } from "../server/testing/process.ts";
import { watchCpu } from "./cpu_shares.ts";
import {
  databaseChoice,
  listHeartbeats,
  makeHeartbeats,
  startServices,
} from "./heartbeat_setup.ts";
import { speedNote } from "./setup.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    heartbeats: { type: "string", default: "1000" },
    connections: { type: "string", default: "32" },
    seconds: { type: "string", default: "20" },
    warmup: { type: "string", default: "3" },
    database: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  console.log(`deno task bench:pings [--heartbeats 1000] [--connections 32] [--seconds 20]
                      [--warmup 3] [--database embedded|postgres]`);
  Deno.exit(0);
}
const HEARTBEATS = Number(args.heartbeats);
const PER_PROJECT = 100;
const SECONDS = Number(args.seconds);
const database = databaseChoice(args.database);

console.log(await speedNote());
const services = await startServices(database);
const [server] = services.servers;
const pathsFile = await Deno.makeTempFile({ prefix: "bench-pings-", suffix: ".json" });
try {
  console.log(
    `bench:pings  heartbeats=${HEARTBEATS} connections=${args.connections} ` +
      `warm-up ${args.warmup} s, measured ${SECONDS} s  database=${services.where}`,
  );
  const made = await makeHeartbeats(server, {
    count: HEARTBEATS,
    perProject: PER_PROJECT,
    body: () => ({ period_seconds: 3600, grace_seconds: 3600 }),
  });
  // Each heartbeat's first success moves it up, a state change settled once; what is measured
  // is the steady state, jobs pinging heartbeats that are up: each is pinged once before.
  let primed = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (primed < made.length) {
      const res = await fetch(made[primed++].ping_url);
      await res.body?.cancel();
      if (res.status !== 200) throw new Error(`priming ping: ${res.status}`);
    }
  }));
  await Deno.writeTextFile(
    pathsFile,
    JSON.stringify(made.map((h) => new URL(h.ping_url).pathname)),
  );

  // The service's CPU with no pings (its deadline watch, runner and deliverer loops), so that
  // the CPU of the pings themselves can be told apart from it below.
  const REST_MS = 5000;
  const restStart = await cpuSecondsOf(server.pid);
  await new Promise((r) => setTimeout(r, REST_MS));
  const restPerSecond = (await cpuSecondsOf(server.pid) - restStart) / (REST_MS / 1000);

  const load = await startServerProcess({
    entry: new URL("./ping_load.ts", import.meta.url).pathname,
    env: {
      ORIGIN: server.url,
      PATHS: pathsFile,
      CONNECTIONS: args.connections!,
      WARMUP_SECONDS: args.warmup!,
      SECONDS: String(SECONDS),
    },
    waitReady: false,
    output: "capture",
  });
  await load.waitForLine((l) => l === "sending");
  const endsAt = Date.now() + (Number(args.warmup) + SECONDS) * 1000;
  const loadStart = { cpu: await cpuSecondsOf(server.pid), at: performance.now() };
  const cpu = await watchCpu(
    [
      { label: "service", pid: server.pid, threads: true },
      { label: "load generator", pid: load.pid },
    ],
    services.postgres,
  );
  // The generator's CPU is read while it still runs: just before its measured phase ends.
  await new Promise((r) => setTimeout(r, Math.max(0, endsAt - Date.now() - 300)));
  const shares = await cpu.end();
  const loadCpu = await cpuSecondsOf(server.pid) - loadStart.cpu;
  const loadSeconds = (performance.now() - loadStart.at) / 1000;
  const status = await load.status;
  const line = load.lines.find((l) => l.text.startsWith("{"));
  if (status.code !== 0 || !line) throw new Error(`the load generator failed:\n${load.output()}`);
  const result = JSON.parse(line.text);

  const counted = (await listHeartbeats(server, {
    projects: Math.ceil(HEARTBEATS / PER_PROJECT),
  })).reduce((a, h) => a + h.pings_total, 0);
  const { warmup, measured } = result.phases;
  const ok = primed + (warmup.statuses["200"] ?? 0) + (measured.statuses["200"] ?? 0);
  const sent = primed + warmup.sent + measured.sent;
  const unanswered = warmup.unanswered + measured.unanswered;
  const rate = (measured.statuses["200"] ?? 0) / SECONDS;
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  console.log(
    `pings accepted:   ${rate.toFixed(0)} a second (target 3,000) over ${SECONDS} s ` +
      `(${measured.statuses["200"] ?? 0} answered 200)`,
  );
  console.log(
    `latency:          p50 ${ms(result.p50)}  p99 ${ms(result.p99)} (target under 25 ms)  max ${
      ms(result.max)
    }`,
  );
  console.log(
    `answers:          ${JSON.stringify(measured.statuses)} measured, ${
      JSON.stringify(warmup.statuses)
    } in the warm-up; ${unanswered} unanswered`,
  );
  console.log(
    `every ping counted: ${counted === ok ? "yes" : "NO"}: the database holds ${counted} pings, ` +
      `${ok} were answered 200 (of ${sent} sent)`,
  );
  shares.print(measured.sent + warmup.sent, "pings");
  const pinged = measured.sent + warmup.sent;
  const net = loadCpu - restPerSecond * loadSeconds;
  console.log(
    `service at rest:   ${(restPerSecond * 100).toFixed(0)} % of a core (${REST_MS / 1000} s ` +
      `before the load); net of it, ${(net / pinged * 1000).toFixed(2)} ms of CPU a ping`,
  );
} finally {
  await services.close();
  await Deno.remove(pathsFile);
}
