/**
 * `deno task bench:kind-cost`: what one check of each kind costs the runner's probe worker, apart
 * from claiming and recording: a process of its own (this script again, with `DENO_CERT` naming
 * the TLS target's CA) runs checks through the runner's worker executor against the loopback
 * targets of `bench:runner --mix` (each kind's in a process of its own), and reads its own CPU
 * (every thread, user + system) and the targets' from /proc.
 *
 *   deno task bench:kind-cost [--checks 4000] [--concurrency 50] [--kinds http,tcp,tls,dns]
 *                             [--probe-ca]
 *
 * Prints per kind: checks made and up, wall time, the worker process's CPU seconds per 1,000
 * checks and the checks a minute one core would make at that cost, and the target's CPU.
 * `--probe-ca` has the worker trust the TLS target's CA as `PROBE_CA_FILE` does (with the system's
 * authorities, `server/base/config.ts`) instead of through `DENO_CERT`.
 * Not a test: figures vary with the machine and its load (printed beside them).
 */
import tls from "node:tls";
import { parseArgs } from "node:util";
import { cpuSecondsOf } from "../server/testing/process.ts";
import { createWorkerExecutor } from "../server/runner/worker_executor.ts";
import type { RunResult } from "../server/runner/execute.ts";
import { type Kind, KINDS, kindsOf, startMixTargets } from "./runner_mix.ts";
import { speedNote } from "./setup.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    checks: { type: "string", default: "4000" },
    concurrency: { type: "string", default: "50" },
    kinds: { type: "string", default: KINDS.join(",") },
    "probe-ca": { type: "boolean", default: false },
    // Internal: the measuring child, told where the targets listen.
    child: { type: "string" },
  },
});
const CHECKS = Number(args.checks);
const CONCURRENCY = Number(args.concurrency);

/** The URL a check of a kind asks, at its target's port (the shape of `runner_mix.ts`'s). */
function urlOf(kind: Kind, port: number, i: number): string {
  switch (kind) {
    case "http":
      return `http://127.0.0.1:${port}/p/${i}`;
    case "tcp":
      return `tcp://127.0.0.1:${port}`;
    case "tls":
      return `tls://localhost:${port}`;
    case "dns":
      return `dns://127.0.0.1:${port}/example.test?type=A`;
  }
}

/** CPU seconds of this process so far, every thread, user + system. */
const ownCpu = () => cpuSecondsOf(Deno.pid);

if (args.child) {
  // The child: measures, prints one JSON line per kind.
  const ports: Record<Kind, number> = JSON.parse(args.child);
  const caFile = Deno.env.get("BENCH_PROBE_CA");
  const ca = args["probe-ca"] && caFile
    ? [...tls.rootCertificates, Deno.readTextFileSync(caFile)].join("\n")
    : undefined;
  const worker = createWorkerExecutor({ allowNetworks: ["127.0.0.1/32"], timeoutMs: 10_000, ca });
  const probe = (url: string) => ({
    url,
    method: "GET",
    headers: {},
    body: null,
    latency: null,
    expect: null,
  });
  for (const kind of Object.keys(ports) as Kind[]) {
    const run = async (n: number) => {
      let next = 0;
      const results: RunResult[] = [];
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < n) {
          const i = next++;
          results.push(await worker.execute(probe(urlOf(kind, ports[kind], i))));
        }
      }));
      return results;
    };
    await run(Math.min(200, CHECKS)); // warm-up: the worker's start, the JIT
    const cpu0 = await ownCpu();
    const t0 = performance.now();
    const results = await run(CHECKS);
    const wall = (performance.now() - t0) / 1000;
    const cpu = (await ownCpu()) - cpu0;
    const errors = new Map<string, number>();
    for (const r of results) if (r.error) errors.set(r.error, (errors.get(r.error) ?? 0) + 1);
    const mostSaid = [...errors].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
    const up = results.filter((r) => r.outcome === "up").length;
    console.log(JSON.stringify({ kind, checks: results.length, up, wall, cpu, mostSaid }));
  }
  worker.close();
  Deno.exit(0);
}

const kinds = kindsOf(args.kinds);
console.log(await speedNote());
console.log(
  `bench:kind-cost  checks=${CHECKS} per kind  concurrency=${CONCURRENCY}  ` +
    `cores=${navigator.hardwareConcurrency}` +
    (args["probe-ca"] ? "  ca=PROBE_CA_FILE's form" : ""),
);
const targets = await startMixTargets(kinds, kinds.length);
try {
  const ports = Object.fromEntries(kinds.map((k) => [k, targets.ports.get(k)![0]]));
  const targetCpu = async () =>
    new Map(
      await Promise.all(
        [...targets.processes].map(async ([k, p]) => [k, await cpuSecondsOf(p.pid)] as const),
      ),
    );
  const before = await targetCpu();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", import.meta.filename!, ...Deno.args, "--child", JSON.stringify(ports)],
    // With --probe-ca the CA is trusted through the worker's `ca` alone, as in production.
    env: args["probe-ca"]
      ? { BENCH_PROBE_CA: targets.runnerEnv.DENO_CERT ?? "" }
      : targets.runnerEnv,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  console.log(
    "kind   checks     up   wall     worker CPU / 1,000   checks/min per core   target CPU / 1,000",
  );
  let line = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    line += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = line.indexOf("\n")) >= 0) {
      const text = line.slice(0, nl);
      line = line.slice(nl + 1);
      if (!text.startsWith("{")) continue;
      const r = JSON.parse(text);
      const after = await targetCpu();
      const target = after.get(r.kind)! - before.get(r.kind)!;
      const per = r.cpu / r.checks * 1000;
      console.log(
        `${r.kind.padEnd(6)} ${String(r.checks).padStart(6)} ${String(r.up).padStart(6)}   ${
          `${r.wall.toFixed(1)} s`.padEnd(8)
        } ${`${per.toFixed(2)} s`.padStart(8)}             ${
          Math.round(r.checks / r.cpu * 60).toLocaleString("en").padStart(10)
        }            ${(target / r.checks * 1000).toFixed(2)} s` +
          (r.up < r.checks && r.mostSaid ? `  (most said: ${r.mostSaid})` : ""),
      );
    }
  }
  const status = await child.status;
  if (!status.success) console.log(`warning: the measuring process ended with ${status.code}`);
  console.log((await speedNote()).replace(/^.*?; /, "at the end: "));
} finally {
  await targets.close();
}
