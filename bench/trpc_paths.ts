/**
 * `deno task bench:trpc-paths`: what the `/trpc` fast path (`server/procedures/fast_path.ts`) saves
 * over tRPC's own `fetchRequestHandler`, in one process, on the embedded database: the same
 * single-call read (`GET /trpc/projects.get?input=…`) through `/trpc`'s endpoint as the edge
 * mounts it (`server/edge/trpc_endpoint.ts`, after the key check) with the fast path and with it
 * answering only streamed lists (`createTrpcFastPath`'s `procedures: false`), each on an embedded
 * database of its own, the two alternating call by call so that drift in the machine's load falls
 * on both alike. What the edge adds around the endpoint is the same for both, and not counted.
 * `whoami.get` (no database) shows the same without the SQL round trip. Both wall-clock and CPU
 * (this process, user + system) per call are printed: on a loaded machine the wall clock waits
 * for the processor, and the CPU figure is the one to judge by.
 *
 * Environment: BENCH_CALLS (pairs of calls per measurement, 2000), BENCH_ROUNDS (5; the median
 * round is printed).
 */
import { cpuUsage } from "node:process";
import { type DatabaseHandle, openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { TRPC_PREFIX } from "../server/edge/handler.ts";
import { createTrpcEndpoint } from "../server/edge/trpc_endpoint.ts";
import { createTrpcFastPath } from "../server/procedures/fast_path.ts";
import { createContext } from "../server/procedures/context.ts";
import { DEFAULT_MAX_ANSWER_BYTES } from "../server/procedures/answer_size.ts";
import { appRouter } from "../server/procedures/router.ts";
import { envNumber, loadNote } from "./setup.ts";

const CALLS = envNumber("BENCH_CALLS", 2000);
const ROUNDS = envNumber("BENCH_ROUNDS", 5);

console.log(`Starting … (${loadNote()})`);
/** `/trpc`'s endpoint over an embedded database of its own, holding the project `bench`. */
async function endpointWith(procedures: boolean) {
  const handle = await openDatabase({ kind: "pglite" });
  await migrateToLatest(handle.db);
  await handle.db.insertInto("projects").values({ name: "bench" }).execute();
  const endpoint = createTrpcEndpoint({
    router: appRouter,
    endpoint: TRPC_PREFIX,
    fastPath: createTrpcFastPath({ router: appRouter, onError: () => {}, procedures }),
    onError: () => {},
    maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES,
  });
  const answer = (request: Request) => {
    const url = new URL(request.url);
    const procedure = url.pathname.slice(TRPC_PREFIX.length + 1);
    const ctx = createContext({ db: handle.db, authenticated: true });
    return endpoint({ request, url, procedure, ctx });
  };
  return { answer, handle };
}
const sides: Record<
  "fast" | "general",
  { answer: (r: Request) => Promise<Response>; handle: DatabaseHandle }
> = {
  fast: await endpointWith(true),
  general: await endpointWith(false),
};

const call = (path: string, general: boolean) => async () => {
  const side = general ? sides.general : sides.fast;
  const response = await side.answer(new Request(`http://bench.test/trpc/${path}`));
  if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
  return await response.text();
};

/** Wall-clock and CPU µs per call of `a` and of `b`, alternating. */
async function pair(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<[number, number, number, number]> {
  const wall = [0, 0];
  const cpu = [0, 0];
  for (let i = 0; i < CALLS; i++) {
    for (const [side, call] of [a, b].entries()) {
      const started = performance.now();
      const used = cpuUsage();
      await call();
      const { user, system } = cpuUsage(used);
      cpu[side] += user + system;
      wall[side] += (performance.now() - started) * 1000;
    }
  }
  return [wall[0] / CALLS, wall[1] / CALLS, cpu[0] / CALLS, cpu[1] / CALLS];
}

const median = (values: number[]) => values.sort((x, y) => x - y)[Math.floor(values.length / 2)];
const input = encodeURIComponent(JSON.stringify({ project: "bench" }));
const cases: [string, string][] = [
  ["projects.get (one row)", `projects.get?input=${input}`],
  ["whoami.get (no database)", `whoami.get?input=${encodeURIComponent("{}")}`],
];
try {
  console.log(`${CALLS} pairs × ${ROUNDS} rounds, one call at a time; median µs per call`);
  const columns = ["fast path", "tRPC", "saved", "CPU fast", "CPU tRPC", "saved"];
  console.log(`${"call".padEnd(26)} ${columns.map((c) => c.padStart(10)).join(" ")}`);
  for (const [name, path] of cases) {
    await pair(call(path, false), call(path, true)); // warm-up
    const rounds: number[][] = [[], [], [], []];
    for (let round = 0; round < ROUNDS; round++) {
      const figures = await pair(call(path, false), call(path, true));
      figures.forEach((figure, i) => rounds[i].push(figure));
    }
    const [f, g, cf, cg] = rounds.map(median);
    const saved = (a: number, b: number) => `${((1 - a / b) * 100).toFixed(1)}%`;
    const cells = [f.toFixed(1), g.toFixed(1), saved(f, g), cf.toFixed(1), cg.toFixed(1)];
    console.log(
      `${name.padEnd(26)} ${[...cells, saved(cf, cg)].map((c) => c.padStart(10)).join(" ")}`,
    );
  }
  console.log(`(${loadNote()})`);
} finally {
  await sides.fast.handle.close();
  await sides.general.handle.close();
}
