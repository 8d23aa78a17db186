/**
 * `deno task bench:layers`: what each layer of the request path costs, in microseconds per
 * call, in one process on the benchmark's seeded PostgreSQL database. The same one-row read
 * (`GET /api/v1/projects/{project}`) is made through ever more of the stack, one call at a time,
 * so the difference between two lines is the cost of the layer between them:
 *
 * 1. the domain function (`getProject`) — the SQL round trip;
 * 2. the procedure through tRPC's caller (`createCaller(ctx).projects.get`) — input and output
 *    validation, tRPC's call machinery;
 * 3. the REST operation (`server/edge/rest/handler.ts`) — input gathering, JSON;
 * 4. the whole handler (`createHttpHandler`) — URL parsing, routing, key check, rate limit,
 *    context, security headers, the log line (to a discarding writer);
 * 5. the same over `/trpc` (through its fast path; `bench:trpc-paths` compares it with tRPC's
 *    own `fetchRequestHandler`).
 *
 * Environment: BENCH_DATABASE_URL (admin URL; default the local 127.0.0.1:5432), BENCH_CALLS
 * (calls per measurement, 3000), BENCH_ROUNDS (5; the median round is printed).
 */
import { cpuUsage } from "node:process";
import { openDatabase } from "../server/storage/database.ts";
import { getProject } from "../server/domain/projects.ts";
import { createPrincipalCheck } from "../server/domain/access/api_key.ts";
import { createHttpHandler, REST_PREFIX } from "../server/edge/handler.ts";
import { readOpenApiJson } from "../server/edge/openapi_served.ts";
import { createLogger } from "../server/base/log.ts";
import { createRestOperations } from "../server/edge/rest/handler.ts";
import { createContext } from "../server/procedures/context.ts";
import { createCallerFactory } from "../server/procedures/init.ts";
import { appRouter } from "../server/procedures/router.ts";
import { projectAt } from "./seed.ts";
import { BENCH_KEY, benchSettings, envNumber, seededDatabase, speedNote } from "./setup.ts";

const CALLS = envNumber("BENCH_CALLS", 3000);
const ROUNDS = envNumber("BENCH_ROUNDS", 5);

const { adminUrl } = benchSettings();
console.log(await speedNote());
console.log("Seeding …");
const database = await seededDatabase(adminUrl);
const handle = await openDatabase({ kind: "postgres", url: database.url });
const db = handle.db;
const rest = createRestOperations({ router: appRouter, onError: () => {} })
  .find(({ route }) => route.method === "GET" && route.template === "/projects/{project}")!.answer;
const createCaller = createCallerFactory(appRouter);
const handler = createHttpHandler({
  router: appRouter,
  openApiJson: readOpenApiJson(),
  db,
  checkKey: createPrincipalCheck([BENCH_KEY]),
  log: createLogger("info", () => {}),
  config: { rateLimitPerSecond: 1e9 },
});
const headers = { "x-service-api-key": BENCH_KEY };
const ctx = () => createContext({ db, authenticated: true });

const layers: [string, (i: number) => Promise<unknown>][] = [
  ["domain: getProject", (i) => getProject({ db, project: projectAt(i % 1000) })],
  [
    "tRPC caller: projects.get",
    (i) => createCaller(ctx()).projects.get({ project: projectAt(i % 1000) }),
  ],
  ["REST operation", async (i) => {
    const url = new URL(`http://bench.test/api/v1/projects/${projectAt(i % 1000)}`);
    const request = new Request(url);
    return await rest({ request, url, path: url.pathname.slice(REST_PREFIX.length), ctx: ctx() });
  }],
  ["HTTP handler, REST", async (i) => {
    const response = await handler(
      new Request(`http://bench.test/api/v1/projects/${projectAt(i % 1000)}`, { headers }),
    );
    return await response.text();
  }],
  ["HTTP handler, /trpc fast path", async (i) => {
    const input = encodeURIComponent(JSON.stringify({ project: projectAt(i % 1000) }));
    const response = await handler(
      new Request(`http://bench.test/trpc/projects.get?input=${input}`, { headers }),
    );
    return await response.text();
  }],
];

/** Wall-clock and CPU (user + system, this process) microseconds per call. */
async function measure(call: (i: number) => Promise<unknown>): Promise<[number, number]> {
  const started = performance.now();
  const cpu = cpuUsage();
  for (let i = 0; i < CALLS; i++) await call(i);
  const used = cpuUsage(cpu);
  return [((performance.now() - started) * 1000) / CALLS, (used.user + used.system) / CALLS];
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];

try {
  for (const [, call] of layers) await measure(call); // warm-up: JIT, prepared statements
  const rounds: number[][] = layers.map(() => []);
  const cpuRounds: number[][] = layers.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order so that drift in the machine's load spreads over every layer.
    const order = round % 2 === 0 ? [...layers.keys()] : [...layers.keys()].reverse();
    for (const index of order) {
      const [wall, cpu] = await measure(layers[index][1]);
      rounds[index].push(wall);
      cpuRounds[index].push(cpu);
    }
  }
  const medians = rounds.map(median);
  const cpus = cpuRounds.map(median);
  console.log(`${CALLS} calls × ${ROUNDS} rounds, one at a time; median µs per call`);
  console.log(
    `${"layer".padEnd(34)} ${"µs/call".padStart(9)} ${"added".padStart(9)} ${
      "CPU µs".padStart(9)
    } ${"added".padStart(9)}`,
  );
  medians.forEach((us, i) => {
    const over = (values: number[]) =>
      i === 0 ? values[i] : i >= 4 ? values[i] - values[1] : values[i] - values[i - 1];
    console.log(
      [layers[i][0].padEnd(34), us, over(medians), cpus[i], over(cpus)].map((v) =>
        typeof v === "string" ? v : v.toFixed(1).padStart(9)
      ).join(" "),
    );
  });
  console.log("(added: over the line above; the /trpc line over the tRPC caller's)");
} finally {
  await handle.close();
  await database.drop();
}
