/**
 * `deno run -A --config deno.dev.json bench/dns.ts`: `dns://` runs against the loopback test
 * responder, one after another, by the runner's executor (dns-packet over node:dgram) and by
 * `Deno.resolveDns` asked at the same address and port. Prints each one's round trips (p50, p99)
 * and runs a second, and what each reports for NXDOMAIN, SERVFAIL and REFUSED: the reason the
 * executor does not use `Deno.resolveDns` (it answers all three alike).
 *
 *   deno run -A --config deno.dev.json bench/dns.ts [--runs 2000]
 *
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import { createNetworkPolicy, parseNetworks } from "../server/base/outbound/network_policy.ts";
import { executeProbe } from "../server/runner/execute.ts";
import { DNS_NAMES, startDnsResponder } from "../server/testing/dns_responder.ts";
import { timeRuns } from "./run_timing.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "2000" } },
});
const RUNS = Number(args.runs);
const policy = createNetworkPolicy(parseNetworks("127.0.0.0/8"));
const dns = await startDnsResponder();
const nameServer = { ipAddr: dns.address, port: dns.port };

async function measure(label: string, once: () => Promise<unknown>) {
  console.log(`${label}: ${RUNS} queries, ${await timeRuns(once, { runs: RUNS })}`);
}

const target = (name: string, type = "A") => ({
  url: `dns://${dns.address}:${dns.port}/${name}?type=${type}`,
  method: "GET",
  headers: {},
  body: null,
  latency: null,
  expect: null,
});

try {
  await measure("executor (dns-packet)", async () => {
    const run = await executeProbe(target("example.test"), { policy, timeoutMs: 2_000 });
    if (run.outcome !== "up") throw new Error(run.error ?? "not up");
  });
  await measure("Deno.resolveDns", () => Deno.resolveDns("example.test", "A", { nameServer }));
  await measure("executor, truncated then TCP", async () => {
    const run = await executeProbe(target(DNS_NAMES.truncated), { policy, timeoutMs: 2_000 });
    if (run.outcome !== "up") throw new Error(run.error ?? "not up");
  });

  for (const name of ["missing.example.test", DNS_NAMES.servfail, DNS_NAMES.refused]) {
    const run = await executeProbe(target(name), { policy, timeoutMs: 2_000 });
    let denoSays: string;
    try {
      await Deno.resolveDns(name, "A", { nameServer });
      denoSays = "records";
    } catch (error) {
      denoSays = `${(error as Error).name}: ${(error as Error).message.split(" for ")[0]}`;
    }
    console.log(`${name}: executor "${run.error}"; Deno.resolveDns ${denoSays}`);
  }
} finally {
  await dns.close();
}
