/**
 * `deno run -A --config deno.dev.json bench/tcp.ts`: `tcp://` runs by the runner's executor
 * against loopback listeners: a connect alone, and a send with an answer judged (a PING/PONG
 * echo), one at a time and 50 at once (p50, p99, runs a second); then the hostile peers, each
 * run's time and the memory they cost: one that never answers (the timeout), one that floods
 * (64 KiB read, no more), one that drips a byte every 10 ms.
 *
 *   deno run -A --config deno.dev.json bench/tcp.ts [--runs 2000]
 *
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import { createNetworkPolicy, parseNetworks } from "../server/base/outbound/network_policy.ts";
import { executeProbe, type ProbeTarget } from "../server/runner/execute.ts";
import { timeRuns } from "./run_timing.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "2000" } },
});
const RUNS = Number(args.runs);
const policy = createNetworkPolicy(parseNetworks("127.0.0.0/8"));

/**
 * The listeners, in a process of their own so that a flooding peer's writes do not take the
 * event loop the runs need: their ports, printed once they listen.
 */
const TARGETS = `
import net from "node:net";
const serves = {
  quiet: () => {},
  echo: (s) => s.on("data", () => s.write("+PONG\\r\\n")),
  silent: () => {},
  flood: (s) => {
    const chunk = new Uint8Array(16 * 1024).fill(120);
    const push = () => { while (!s.destroyed && s.write(chunk)) {} };
    s.on("drain", push);
    push();
  },
  drip: (s) => {
    const timer = setInterval(() => s.destroyed ? clearInterval(timer) : s.write("x"), 10);
    s.on("close", () => clearInterval(timer));
  },
};
const ports = {};
for (const [name, serve] of Object.entries(serves)) {
  const server = net.createServer((s) => { s.on("error", () => {}); serve(s); });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  ports[name] = server.address().port;
}
console.log(JSON.stringify(ports));
`;
const child = new Deno.Command(Deno.execPath(), {
  args: ["eval", "--ext=js", TARGETS],
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
let line = "";
while (!line.includes("\n")) {
  const { value, done } = await reader.read();
  if (done) throw new Error("the targets' process ended");
  line += value;
}
const ports = JSON.parse(line) as Record<string, number>;

const probe = (name: string, fields: Partial<ProbeTarget> = {}): ProbeTarget => ({
  url: `tcp://127.0.0.1:${ports[name]}`,
  method: "GET",
  headers: {},
  body: null,
  latency: null,
  expect: null,
  ...fields,
});

async function measure(label: string, target: ProbeTarget, concurrency: number) {
  const once = async () => {
    const run = await executeProbe(target, { policy, timeoutMs: 2_000 });
    if (run.outcome !== "up") throw new Error(run.error ?? "not up");
  };
  const figures = await timeRuns(once, { runs: RUNS, concurrency });
  console.log(`${label}, ${concurrency} at once: ${RUNS} runs, ${figures}`);
}

/** Runs `target` `count` times at once: the slowest run's time, and the heap they took. */
async function hostile(label: string, target: ProbeTarget, count: number) {
  const heap = () => Deno.memoryUsage().heapUsed;
  const before = heap();
  let peak = before;
  const sampler = setInterval(() => peak = Math.max(peak, heap()), 5);
  const began = performance.now();
  const runs = await Promise.all(
    Array.from({ length: count }, () => executeProbe(target, { policy, timeoutMs: 1_000 })),
  );
  const took = performance.now() - began;
  clearInterval(sampler);
  console.log(
    `${label}: ${count} runs at once, all ended in ${Math.round(took)} ms ("${runs[0].error}"), ` +
      `heap +${((peak - before) / 1024 / 1024).toFixed(1)} MiB at most`,
  );
}

try {
  await measure("connect only", probe("quiet"), 1);
  await measure("connect only", probe("quiet"), 50);
  const pingPong = { body: "PING\r\n", expect: { body: { contains: ["+PONG"] } } };
  await measure("send PING, expect +PONG", probe("echo", pingPong), 1);
  await measure("send PING, expect +PONG", probe("echo", pingPong), 50);
  const never = { expect: { body: { contains: ["never"] } } };
  await hostile("a peer that never answers (timeout 1000 ms)", probe("silent", never), 100);
  await hostile("a peer that floods", probe("flood", never), 100);
  await hostile("a peer that drips a byte every 10 ms", probe("drip", never), 100);
} finally {
  child.kill();
  await reader.cancel();
  await child.status;
}
