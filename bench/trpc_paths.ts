/**
 * `deno task bench:trpc-paths`: what the `/trpc` fast path (`server/procedures/fast_path.ts`) saves
 * over tRPC's own `fetchRequestHandler`, in one process, on the embedded database: the same
 * single-call read (`GET /trpc/projects.get?input=…`) through the whole handler of a service with
 * the fast path and of one without it (`trpcFastPath: false`), each on an embedded database of
 * its own, the two alternating call by call so that drift in the machine's load falls on both
 * alike.
 * `whoami.get` (no database) shows the same without the SQL round trip.
 *
 * Environment: BENCH_CALLS (pairs of calls per measurement, 2000), BENCH_ROUNDS (5; the median
 * round is printed).
 */
import { createApp } from "../server/app.ts";
import { createLogger } from "../server/base/log.ts";
import { BENCH_KEY, envNumber, loadNote } from "./setup.ts";

const CALLS = envNumber("BENCH_CALLS", 2000);
const ROUNDS = envNumber("BENCH_ROUNDS", 5);

console.log(`Starting … (${loadNote()})`);
const headers = { "x-service-api-key": BENCH_KEY };
/** A service over an embedded database of its own, holding the project `bench`. */
async function serviceWith(trpcFastPath: boolean) {
  const app = await createApp({
    database: { kind: "pglite" },
    apiKeys: [BENCH_KEY],
    log: createLogger("silent"),
    rateLimitPerSecond: 1e9,
    trpcFastPath,
  });
  const created = await app.handler(
    new Request("http://bench.test/api/v1/projects", {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ project: "bench" }),
    }),
  );
  if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
  return app;
}
const apps = { fast: await serviceWith(true), general: await serviceWith(false) };

const call = (path: string, general: boolean) => async () => {
  const app = general ? apps.general : apps.fast;
  const response = await app.handler(new Request(`http://bench.test/trpc/${path}`, { headers }));
  if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
  return await response.text();
};

/** µs per call of `a` and of `b`, alternating. */
async function pair(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<[number, number]> {
  let ta = 0;
  let tb = 0;
  for (let i = 0; i < CALLS; i++) {
    let started = performance.now();
    await a();
    ta += performance.now() - started;
    started = performance.now();
    await b();
    tb += performance.now() - started;
  }
  return [(ta * 1000) / CALLS, (tb * 1000) / CALLS];
}

const median = (values: number[]) => values.sort((x, y) => x - y)[Math.floor(values.length / 2)];
const input = encodeURIComponent(JSON.stringify({ project: "bench" }));
const cases: [string, string][] = [
  ["projects.get (one row)", `projects.get?input=${input}`],
  ["whoami.get (no database)", `whoami.get?input=${encodeURIComponent("{}")}`],
];
try {
  console.log(`${CALLS} pairs × ${ROUNDS} rounds, one call at a time; median µs per call`);
  console.log(
    `${"call".padEnd(26)} ${"fast path".padStart(10)} ${"tRPC".padStart(10)} ${
      "saved".padStart(8)
    }`,
  );
  for (const [name, path] of cases) {
    await pair(call(path, false), call(path, true)); // warm-up
    const fast: number[] = [];
    const general: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [f, g] = await pair(call(path, false), call(path, true));
      fast.push(f);
      general.push(g);
    }
    const [f, g] = [median(fast), median(general)];
    console.log(
      `${name.padEnd(26)} ${f.toFixed(1).padStart(10)} ${g.toFixed(1).padStart(10)} ${
        `${((1 - f / g) * 100).toFixed(1)}%`.padStart(8)
      }`,
    );
  }
  console.log(`(${loadNote()})`);
} finally {
  await apps.fast.close();
  await apps.general.close();
}
