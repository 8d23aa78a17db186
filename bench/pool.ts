/**
 * `deno task bench:pool`: a PostgreSQL pool kept full, as one postgres.js instance of `max`
 * connections and as the service's lanes (`server/storage/lanes.ts`: one instance a connection).
 * Each side keeps `BENCH_CONNECTIONS` (64) one-row reads in flight for `BENCH_ROUNDS` (8) rounds
 * of `BENCH_SECONDS` (5) and prints, per round, the reads a second and this process's CPU µs a
 * read. A cost that grows from round to round is the pool's queue growing (see lanes.ts).
 *
 * Environment: BENCH_DATABASE_URL (a PostgreSQL server; postgres://postgres@127.0.0.1:5432/postgres
 * by default), BENCH_POOL_SIZE (10), BENCH_CONNECTIONS, BENCH_ROUNDS, BENCH_SECONDS.
 */
import { cpuUsage } from "node:process";
import postgres from "postgres";
import { Lanes } from "../server/storage/lanes.ts";
import { benchSettings, envNumber, speedNote } from "./setup.ts";

const poolSize = envNumber("BENCH_POOL_SIZE", 10);
const inFlight = envNumber("BENCH_CONNECTIONS", 64);
const rounds = envNumber("BENCH_ROUNDS", 8);
const seconds = envNumber("BENCH_SECONDS", 5);
const url = benchSettings().adminUrl;
const QUERY = "select $1::int as n";

type Read = (n: number) => Promise<unknown>;

/** The process's CPU seconds (user + system). */
function cpuSeconds(): number {
  const { user, system } = cpuUsage();
  return (user + system) / 1e6;
}

async function drive(read: Read): Promise<string[]> {
  const figures: string[] = [];
  for (let round = 0; round < rounds; round++) {
    let reads = 0;
    const until = performance.now() + seconds * 1000;
    const cpu = cpuSeconds();
    await Promise.all(Array.from({ length: inFlight }, async (_, i) => {
      while (performance.now() < until) {
        await read(i);
        reads++;
      }
    }));
    const used = cpuSeconds() - cpu;
    figures.push(`${Math.round(reads / seconds)}/s ${(1e6 * used / reads).toFixed(1)} µs`);
  }
  return figures;
}

const options = { onnotice: () => {}, max: poolSize };
console.log(await speedNote());
console.log(
  `${inFlight} reads in flight, pool of ${poolSize}, ${rounds} rounds of ${seconds} s; ` +
    "per round: reads a second and CPU µs a read",
);

const single = postgres(url, options);
try {
  const figures = await drive((n) => single.unsafe(QUERY, [n], { prepare: true }));
  console.log(`one postgres.js instance of ${poolSize}: ${figures.join(" | ")}`);
} finally {
  await single.end();
}

const lanes = new Lanes(poolSize, () => postgres(url, { ...options, max: 1 }));
try {
  const figures = await drive((n) => lanes.unsafe(QUERY, [n], { prepare: true }));
  console.log(`lanes (${poolSize} of one):              ${figures.join(" | ")}`);
} finally {
  await lanes.end();
}
