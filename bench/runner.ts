/**
 * `deno task bench:runner`: N probes against a local target, run by one or two runner
 * processes (`server/operations/runner_process.ts`) on PostgreSQL, in a database of the bench's own that is
 * dropped afterwards. Prints checks per second, schedule slip (start minus due time), peak RSS
 * and CPU seconds per 1,000 checks of the runner processes, and double runs.
 *
 *   deno task bench:runner [--probes 10000] [--interval 60] [--duration 180] [--runners 1]
 *                          [--concurrency N] [--delay 0] [--slow-drip 0] [--drip-ms 15000]
 *                          [--host-concurrency N] [--mix | --kinds http,tcp,tls,dns]
 *                          [--startup 8]
 *
 * With `--mix`, the probes are of the four kinds in even shares (`--kinds` names some of them),
 * each kind against a loopback target in a process of its own (`runner_mix.ts`): an HTTP server, a
 * TCP listener, a TLS server and the tests' DNS responder. It prints checks per minute per kind
 * and in all, what each target served, and the CPU of each process (the runners and their threads,
 * each target, PostgreSQL's backends): `--kinds tls` alone tells what a kind costs.
 *
 * `--startup` is how long after the probes are made their first runs fall due (8 s): on a loaded
 * machine a runner takes longer than that to start over 200,000 probes.
 *
 * With `--slow-drip S`, S more probes point at a second target (another host) that sends its
 * body a byte at a time over `--drip-ms`: the schedule slip of the other probes is printed apart
 * (issue 18: run slots shared fairly). `--host-concurrency` sets `PROBE_HOST_CONCURRENCY`.
 *
 * BENCH_RUNNER_LOG=file runs the runners with LOG_LEVEL=debug and writes their output there (their
 * `runner tick` lines show how the claim window was sized: docs/runner.md, "Claim window").
 * BENCH_DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres).
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import postgres from "postgres";
import { sql } from "kysely";
import { openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { syncSchedules } from "../server/runner/store.ts";
import { RUNNER_ENTRY, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { speedNote } from "./setup.ts";
import { watchCpu, type Watched } from "./cpu_shares.ts";
import {
  insertMixProbes,
  KINDS,
  kindsOf,
  type MixTargets,
  printByKind,
  startMixTargets,
} from "./runner_mix.ts";

const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    probes: { type: "string", default: "10000" },
    interval: { type: "string", default: "60" },
    duration: { type: "string", default: "180" },
    runners: { type: "string", default: "1" },
    concurrency: { type: "string" },
    delay: { type: "string", default: "0" },
    "slow-drip": { type: "string", default: "0" },
    "drip-ms": { type: "string", default: "15000" },
    "host-concurrency": { type: "string" },
    startup: { type: "string", default: "8" },
    mix: { type: "boolean", default: false },
    kinds: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  console.log(`deno task bench:runner [--probes 10000] [--interval 60] [--duration 180]
                       [--runners 1] [--concurrency N] [--delay 0]
                       [--slow-drip 0] [--drip-ms 15000] [--host-concurrency N]
                       [--mix | --kinds ${KINDS.join(",")}] [--startup 8]

N probes (--probes) against a local target, run by --runners runner processes on PostgreSQL
for --duration seconds, each probe every --interval seconds; the target answers after --delay
ms. --concurrency sets PROBE_CONCURRENCY (unset: the runner's default). BENCH_DATABASE_URL names the PostgreSQL server (default ${DEFAULT_ADMIN_URL}).
--slow-drip S adds S probes at a second target that sends its body a byte at a time over
--drip-ms ms, and prints the other probes' slip apart; --host-concurrency sets
PROBE_HOST_CONCURRENCY (unset: the runner's default).
--mix makes the probes http, tcp, tls and dns in even shares (--kinds: some of them), each kind
against a loopback target process of its own, and prints checks per minute per kind and the CPU
of each process. --startup: seconds from the probes' making to their first runs (8).
A short run: --probes 50 --interval 10 --duration 10 (the runner's interval is 10 s at least)
Slow-drip: --probes 1000 --slow-drip 300 --interval 10 --duration 60
Kinds: --mix --probes 200000 --duration 90, or --kinds tls --probes 20000 --duration 60`);
  Deno.exit(0);
}
console.log(await speedNote());
const N = Number(args.probes);
const INTERVAL_S = Number(args.interval);
const DURATION_S = Number(args.duration);
const RUNNERS = Number(args.runners);
const SLOW = Number(args["slow-drip"]);
const STARTUP_MS = Number(args.startup) * 1000;
const ADMIN_URL = Deno.env.get("BENCH_DATABASE_URL") ?? DEFAULT_ADMIN_URL;
const MIX = args.kinds !== undefined || args.mix ? kindsOf(args.kinds ?? KINDS.join(",")) : null;

const name = `probe_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;

async function admin(statement: string) {
  const s = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await s.unsafe(statement);
  } finally {
    await s.end();
  }
}

/** CPU seconds (user + system) and peak RSS (MiB) of a runner process, from /proc. */
async function usage(runner: ServerProcess) {
  const [cpu, { peakKiB }] = await Promise.all([runner.cpuSeconds(), runner.memory()]);
  return { cpu, peakRssMiB: peakKiB / 1024 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

console.log(
  `bench:runner  probes=${N} interval=${INTERVAL_S}s duration=${DURATION_S}s runners=${RUNNERS} ` +
    `concurrency=${
      args.concurrency ?? "default"
    } target delay=${args.delay}ms  cores=${navigator.hardwareConcurrency}` +
    (SLOW ? `  slow-drip=${SLOW} over ${args["drip-ms"]}ms` : "") +
    (args["host-concurrency"] ? `  host-concurrency=${args["host-concurrency"]}` : "") +
    (MIX ? `  kinds=${MIX.join(",")} in even shares` : "") + `  database=PostgreSQL ${url.host}`,
);
await admin(`create database ${name}`);
const target = await startTarget({ countOnly: true, delayMs: Number(args.delay) });
const slowTarget = await startTarget({ countOnly: true });
const handle = await openDatabase({ kind: "postgres", url: url.href, poolSize: 2 });
const children: ServerProcess[] = [];
let mix: MixTargets | null = null;
try {
  if (MIX) mix = await startMixTargets(MIX, N);
  const db = handle.db;
  await migrateToLatest(db);
  await db.insertInto("projects").values({ name: "bench" }).execute();
  if (mix) await insertMixProbes(db, mix, N);
  else {
    await sql`
      insert into probes (project, probe_id, url, method, headers)
      select 'bench', 'b' || i, ${target.origin} || '/p/' || i, 'GET', '{}'
      from generate_series(1, ${N}::int) as i`.execute(db);
  }
  if (SLOW > 0) {
    await sql`
      insert into probes (project, probe_id, url, method, headers)
      select 'bench', 's' || i, ${slowTarget.origin} || '/drip?ms=' || ${args["drip-ms"]}::int
        || '&bytes=20&i=' || i, 'GET', '{}'
      from generate_series(1, ${SLOW}::int) as i`.execute(db);
  }
  // Steady state from the start: every probe on its grid, the first runs after the runners
  // have had time to start, not all due at once as freshly created probes would be.
  const t0 = Date.now() + STARTUP_MS;
  await syncSchedules(db, { now: t0, intervalMs: INTERVAL_S * 1000, first: "grid" });

  for (let i = 0; i < RUNNERS; i++) {
    children.push(
      await startServerProcess({
        entry: RUNNER_ENTRY,
        env: {
          DATABASE_URL: url.href,
          PROBE_INTERVAL_SECONDS: String(INTERVAL_S),
          ...(args.concurrency && { PROBE_CONCURRENCY: args.concurrency }),
          PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
          ...(args["host-concurrency"] && { PROBE_HOST_CONCURRENCY: args["host-concurrency"] }),
          LOG_LEVEL: Deno.env.get("BENCH_RUNNER_LOG") ? "debug" : "info",
          ...mix?.runnerEnv,
        },
        // The runner serves no HTTP: nothing to wait for but its "runner started" line below.
        waitReady: false,
        output: "capture",
      }),
    );
  }
  const outputs = () => children.map((c) => c.output());
  const ended = children.map(() => false);
  children.forEach((c, i) => c.status.then(() => ended[i] = true));
  while (Date.now() < t0 - 500) await sleep(100);
  const gone = ended.indexOf(true);
  if (gone >= 0) throw new Error(`runner ${gone + 1} ended at start:\n${outputs()[gone]}`);
  if (!outputs().every((o) => o.includes("runner started"))) {
    console.log("warning: a runner had not started when the first runs fell due");
  }
  const cpuAtStart = await Promise.all(children.map(usage));
  const watched: Watched[] = [
    ...children.map((c, i) => ({ label: `runner ${i + 1}`, pid: c.pid, threads: true })),
    ...[...mix?.processes ?? []].map(([kind, p]) => ({ label: `${kind} target`, pid: p.pid })),
    { label: mix ? "bench" : "bench and its target", pid: Deno.pid },
  ];
  const cpuWatch = await watchCpu(watched, { adminUrl: ADMIN_URL, database: name });
  while (Date.now() < t0) await sleep(10);
  const tEnd = t0 + DURATION_S * 1000;
  let lastReport = Date.now();
  while (Date.now() < tEnd) {
    await sleep(Math.min(1000, tEnd - Date.now()));
    if (Date.now() - lastReport >= 30_000) {
      lastReport = Date.now();
      const { n } = await db.selectFrom("probe_results").select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow();
      console.log(`  … ${Math.round((Date.now() - t0) / 1000)} s: ${n} checks`);
    }
  }
  const atEnd = await Promise.all(children.map(usage));
  const cpuShares = await cpuWatch.end();
  for (const child of children) child.kill("SIGTERM");
  const statuses = await Promise.all(children.map((c) => c.status));

  const since = new Date(t0);
  const until = new Date(tEnd);
  const { rows: [m] } = await sql<{
    checks: number;
    p50: number;
    p99: number;
    max: number;
    up: number;
  }>`
    select count(*)::int as checks,
           percentile_disc(0.5) within group (order by slip) as p50,
           percentile_disc(0.99) within group (order by slip) as p99,
           max(slip) as max,
           count(*) filter (where outcome = 'up')::int as up
    from (select outcome, extract(epoch from (started_at - due_at)) * 1000 as slip
          from probe_results where due_at >= ${since} and due_at < ${until}) r`.execute(db);
  const { rows: [fast] } = await sql<{ checks: number; p50: number; p99: number; max: number }>`
    select count(*)::int as checks,
           percentile_disc(0.5) within group (order by slip) as p50,
           percentile_disc(0.99) within group (order by slip) as p99,
           max(slip) as max
    from (select extract(epoch from (r.started_at - r.due_at)) * 1000 as slip
          from probe_results r join probes p on p.key = r.probe_key
          where r.due_at >= ${since} and r.due_at < ${until} and p.probe_id like 'b%') r`
    .execute(db);
  const { rows: [dup] } = await sql<{ doubles: number; total: number }>`
    select coalesce(sum(n - 1), 0)::int as doubles, coalesce(sum(n), 0)::int as total
    from (select count(*) as n from probe_results group by probe_key, due_at) g`.execute(db);
  const served = await mix?.close();
  const hits = served
    ? [...served.values()].reduce((a, b) => a + b, 0)
    : [...target.counts.values()].reduce((a, b) => a + b, 0);
  const cpu = atEnd.reduce((a, u, i) => a + u.cpu - cpuAtStart[i].cpu, 0);
  const lost = outputs().reduce((a, o) => {
    const line = o.split("\n").find((l) => l.includes('"runner stopped"'));
    return a + (line ? Number(JSON.parse(line).lost ?? 0) : 0);
  }, 0);

  const logTo = Deno.env.get("BENCH_RUNNER_LOG");
  if (logTo) await Deno.writeTextFile(logTo, outputs().join("\n"));
  const warnings = outputs().flatMap((o) =>
    o.split("\n").filter((l) => l.includes('"runner overloaded: probe runs start late"'))
  );
  const behind = warnings.map((l) => Number(JSON.parse(l).behind_seconds ?? 0));

  const expected = Math.round((N + SLOW) * DURATION_S / INTERVAL_S);
  const fmt = (ms: number) => `${Math.round(ms)} ms`;
  console.log(`checks due in the window: ${m.checks} of ${expected} expected (${m.up} up)`);
  console.log(
    `checks per second:        ${(m.checks / DURATION_S).toFixed(1)} (${
      Math.round(m.checks / DURATION_S * 60).toLocaleString("en")
    } a minute)`,
  );
  if (served) await printByKind(db, { since, until, served });
  console.log(`schedule slip:            p50 ${fmt(m.p50)}  p99 ${fmt(m.p99)}  max ${fmt(m.max)}`);
  if (SLOW > 0) {
    console.log(
      `fast probes' slip:        p50 ${fmt(fast.p50)}  p99 ${fmt(fast.p99)}  max ${fmt(fast.max)}` +
        `  (${fast.checks} of ${Math.round(N * DURATION_S / INTERVAL_S)} expected checks)`,
    );
    console.log(
      `slow-drip checks:         ${m.checks - fast.checks} (target requests ${
        [...slowTarget.counts.values()].reduce((a, b) => a + b, 0)
      }, most in flight at once ${slowTarget.drips.peak})`,
    );
  }
  atEnd.forEach((u, i) =>
    console.log(`runner ${i + 1}:                 peak RSS ${u.peakRssMiB.toFixed(0)} MiB`)
  );
  console.log(
    `CPU per 1,000 checks:     ${(cpu / m.checks * 1000).toFixed(2)} s (runners, user+system)`,
  );
  // What a core given to the runners alone would make at this cost: the wall figure above is
  // what they made with the CPU they got beside the targets, PostgreSQL and others' work.
  console.log(
    `checks a minute per core: ${
      cpu > 0 ? Math.round(m.checks / cpu * 60).toLocaleString("en") : "?"
    } (of the runners' own CPU)`,
  );
  console.log(
    `double runs:              ${dup.doubles} recorded twice; target requests ${hits} for ${dup.total} ` +
      `recorded runs; ${lost} runs dropped for a lost lease`,
  );
  console.log(
    `overload warnings:        ${warnings.length}` +
      (warnings.length ? ` (behind ${behind.map((b) => `${b} s`).join(", ")})` : ""),
  );
  cpuShares.print(m.checks, "checks");
  const failed = statuses.filter((s) => s.code !== 0).length;
  if (failed) console.log(`warning: ${failed} runner(s) did not exit cleanly`);
} finally {
  for (const child of children) child.kill("SIGKILL");
  for (const p of mix?.processes.values() ?? []) p.kill("SIGKILL");
  await handle.close();
  await target.close();
  await slowTarget.close();
  await admin(`drop database if exists ${name} with (force)`);
}
