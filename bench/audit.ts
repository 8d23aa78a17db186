/**
 * `deno task bench:audit`: what an audit entry adds to a write. The same write (a project's
 * label, `projects.update`, alternating two values so each is a change) through the procedure
 * with and without its audit entry (`server/procedures/audit.ts`: its transaction, the reads of the
 * project before and after, the diff and the insert), interleaved so that both meet the same
 * load. On the embedded database as the service runs it (PGlite in its worker thread), and on
 * PostgreSQL when BENCH_DATABASE_URL (or TEST_DATABASE_URL) names a server; prints p50 and p99
 * of each and the p50 difference (the target: under 1 ms), and the CPU a write costs this
 * process (user + system, the embedded database's thread included; PostgreSQL's server's own
 * is not) on average: on a loaded machine a write's wall time is mostly waiting for a core, its
 * CPU is what it costs.
 *
 *   deno task bench:audit [--writes 2000]
 *
 * Not a test: figures vary with the machine and its load (`uptime` is printed).
 */
import { cpuUsage } from "node:process";
import { parseArgs } from "node:util";
import { type DatabaseHandle, openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { createPostgresDatabase, openDropping } from "../server/testing/app.ts";
import { createAuditor } from "../server/procedures/audit.ts";
import { createProcedureCaller } from "../server/procedures/caller.ts";
import { createContext } from "../server/procedures/context.ts";
import { appRouter } from "../server/procedures/router.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: { writes: { type: "string", default: "2000" }, help: { type: "boolean", short: "h" } },
});
if (args.help) {
  console.log("deno task bench:audit [--writes 2000]");
  Deno.exit(0);
}
const WRITES = Number(args.writes);

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (value: number) => `${value.toFixed(3)} ms`;

async function measure(label: string, handle: DatabaseHandle): Promise<void> {
  const call = createProcedureCaller(appRouter);
  const audit = createAuditor(appRouter);
  const plain = createContext({ db: handle.db, authenticated: true });
  const audited = {
    ...plain,
    audit,
    request: { address: "127.0.0.1", userAgent: "bench", requestId: "b-1" },
  };
  const project = `bench-${crypto.randomUUID().slice(0, 8)}`;
  await call(plain, ["projects", "create"], { project });
  const times: Record<"with" | "without", number[]> = { with: [], without: [] };
  const cpu: Record<"with" | "without", number> = { with: 0, without: 0 };
  const write = async (kind: "with" | "without", i: number) => {
    const used = cpuUsage();
    const started = performance.now();
    await call(kind === "with" ? audited : plain, ["projects", "update"], {
      project,
      label: `label ${i}`,
    });
    times[kind].push(performance.now() - started);
    const { user, system } = cpuUsage(used);
    cpu[kind] += (user + system) / 1000;
  };
  // Warm both paths (compiled queries, prepared statements, the JIT) before measuring.
  for (let i = 0; i < 200; i++) await write(i % 2 ? "with" : "without", i);
  times.with.length = 0;
  times.without.length = 0;
  cpu.with = cpu.without = 0;
  for (let i = 0; i < WRITES; i++) {
    await write("without", 2 * i);
    await write("with", 2 * i + 1);
  }
  const figures = (["without", "with"] as const).map((kind) => {
    const sorted = times[kind].sort((a, b) => a - b);
    const cpuMs = cpu[kind] / sorted.length;
    return { kind, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), cpuMs };
  });
  for (const { kind, p50, p99, cpuMs } of figures) {
    console.log(
      `${label}  ${kind.padEnd(7)} audit entry  p50 ${ms(p50)}  p99 ${ms(p99)}  ` +
        `CPU ${ms(cpuMs)} a write`,
    );
  }
  console.log(
    `${label}  added by the entry: p50 ${ms(figures[1].p50 - figures[0].p50)}, ` +
      `p99 ${ms(figures[1].p99 - figures[0].p99)}, ` +
      `CPU ${ms(figures[1].cpuMs - figures[0].cpuMs)} a write (target: under 1 ms at p50)`,
  );
}

const load = async () =>
  new TextDecoder().decode((await new Deno.Command("uptime").output()).stdout).trim();

console.log(`bench:audit: ${WRITES} writes each way; load: ${await load()}`);
const embedded = await openDatabase({ kind: "pglite", thread: "worker" });
try {
  await migrateToLatest(embedded.db);
  await measure("embedded  ", embedded);
} finally {
  await embedded.close();
}
const adminUrl = Deno.env.get("BENCH_DATABASE_URL") ?? Deno.env.get("TEST_DATABASE_URL");
if (adminUrl) {
  const postgres = await openDropping(await createPostgresDatabase(adminUrl, "probe_bench"));
  try {
    await migrateToLatest(postgres.db);
    await measure("postgresql", postgres);
  } finally {
    await postgres.close();
  }
} else {
  console.log("postgresql: skipped (set BENCH_DATABASE_URL or TEST_DATABASE_URL)");
}
console.log(`load after: ${await load()}`);
