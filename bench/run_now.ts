/**
 * `deno task bench:run-now`: run-now against probes whose target redirects, as fast as one key
 * may call it, on the embedded database in process. Prints the calls answered 200 and 429 per
 * second and the requests the target received per second, against the key's limit: each
 * redirect hop counts against the key (issue 18), so the target sees about the key's rate.
 *
 *   deno task bench:run-now [--rate 100] [--hops 5] [--probes 20] [--duration 10]
 *
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import { createApp } from "../server/app.ts";
import { createLogger } from "../server/base/log.ts";
import { executeProbe } from "../server/runner/execute.ts";
import { LOOPBACK_ONLY, TEST_API_KEY, TestClient } from "../server/testing/app.ts";
import { startTarget } from "../server/testing/target_server.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    rate: { type: "string", default: "100" },
    hops: { type: "string", default: "5" },
    probes: { type: "string", default: "20" },
    duration: { type: "string", default: "10" },
  },
});
const RATE = Number(args.rate);
const PROBES = Number(args.probes);
const DURATION_MS = Number(args.duration) * 1000;

const target = await startTarget({ countOnly: true });
const app = await createApp({
  database: { kind: "pglite" },
  apiKeys: [TEST_API_KEY],
  log: createLogger("silent"),
  runProbe: (probe, hooks) =>
    executeProbe(probe, { ...hooks, policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
  config: { rateLimitPerSecond: RATE },
});
const api = new TestClient(app.handler);
try {
  await api.post("/api/v1/projects", { project: "bench" });
  const ids: string[] = [];
  for (let i = 0; i < PROBES; i++) {
    const res = await api.post("/api/v1/projects/bench/probes", {
      url: `${target.origin}/redirect/${args.hops}?i=${i}`,
    });
    ids.push(res.body.data.probe_id);
  }
  // A full bucket to start from, as a key that has been idle.
  await new Promise((r) => setTimeout(r, 2_000));
  const sentBefore = [...target.counts.values()].reduce((a, b) => a + b, 0);
  const answers = new Map<number, number>();
  const end = performance.now() + DURATION_MS;
  // One caller per probe (a probe has one manual run in flight at most), as fast as answered.
  await Promise.all(ids.map(async (id) => {
    while (performance.now() < end) {
      const res = await api.post(`/api/v1/projects/bench/probes/${id}/run`);
      answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
      // Refused: try again soon (not in a tight loop that would only measure the refusals).
      if (res.status === 429) await new Promise((r) => setTimeout(r, 5));
    }
  }));
  const seconds = DURATION_MS / 1000;
  const sent = [...target.counts.values()].reduce((a, b) => a + b, 0) - sentBefore;
  const per = (n: number) => (n / seconds).toFixed(1);
  console.log(
    `bench:run-now  rate=${RATE}/s per key  hops=${args.hops}  probes=${PROBES}  ` +
      `duration=${seconds}s  cores=${navigator.hardwareConcurrency}`,
  );
  console.log(`calls answered 200:   ${per(answers.get(200) ?? 0)}/s`);
  console.log(`calls answered 429:   ${per(answers.get(429) ?? 0)}/s`);
  const others = [...answers].filter(([s]) => s !== 200 && s !== 429);
  if (others.length) console.log(`other answers:        ${JSON.stringify(others)}`);
  console.log(`target requests:      ${per(sent)}/s (the key's limit: ${RATE}/s)`);
} finally {
  await app.close();
  await target.close();
}
