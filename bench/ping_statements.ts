/**
 * Where a batch of pings spends its time in the database: the service's app in this process (on
 * the embedded database on disk, in its worker thread as the service runs it, or on a PostgreSQL
 * database of its own), `--heartbeats` heartbeats made through its REST interface and each
 * pinged once (so up, as a job's heartbeat is between state changes), then `--batches` batches of `--batch` success pings (each for another heartbeat, in turn) recorded
 * as the ping path records them (`recordPingBatch`, one transaction). Each statement is timed
 * through a Kysely plugin (from the query's start to its rows); prints, per statement, its calls
 * and milliseconds per batch and per ping, and the whole batch's; then the CPU the batches took
 * (this process by thread, the embedded database's among them; PostgreSQL's backends), which a
 * busy machine changes far less than the times.
 *
 *   deno run --allow-all bench/ping_statements.ts [--database embedded|postgres]
 *                                                 [--heartbeats 1000] [--batch 32] [--batches 50]
 *
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import type { KyselyPlugin, QueryId, RootOperationNode } from "kysely";
import { createApp } from "../server/app.ts";
import { openDatabase } from "../server/storage/database.ts";
import { recordPingBatch } from "../server/runner/heartbeats/pings.ts";
import { createLogger } from "../server/base/log.ts";
import { createPostgresDatabase, TEST_API_KEY, TestClient } from "../server/testing/app.ts";
import { databaseChoice } from "./heartbeat_setup.ts";
import { watchCpu } from "./cpu_shares.ts";
import { speedNote } from "./setup.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    database: { type: "string" },
    heartbeats: { type: "string", default: "1000" },
    batch: { type: "string", default: "32" },
    batches: { type: "string", default: "50" },
  },
});
const database = databaseChoice(args.database);
const HEARTBEATS = Number(args.heartbeats);
const BATCH = Number(args.batch);
const BATCHES = Number(args.batches);

/** A statement's name: its first words (raw SQL) or its kind and table (a builder's). */
function labelOf(node: RootOperationNode): string {
  if (node.kind === "RawNode") {
    return node.sqlFragments.join("$").replace(/\s+/g, " ").trim().slice(0, 70);
  }
  const table = JSON.stringify(node).match(/"IdentifierNode","name":"([a-z_]+)"/)?.[1] ?? "";
  return `${node.kind.replace("Node", "")} ${table}`;
}

const times = new Map<string, { calls: number; ms: number }>();
const open = new Map<QueryId, { label: string; at: number }>();
const timer: KyselyPlugin = {
  transformQuery({ node, queryId }) {
    open.set(queryId, { label: labelOf(node), at: performance.now() });
    return node;
  },
  transformResult({ result, queryId }) {
    const started = open.get(queryId);
    open.delete(queryId);
    if (started) {
      const t = times.get(started.label) ?? { calls: 0, ms: 0 };
      t.calls++;
      t.ms += performance.now() - started.at;
      times.set(started.label, t);
    }
    return Promise.resolve(result);
  },
};

console.log(await speedNote());
const dataDir = database.kind === "embedded" ? await Deno.makeTempDir({ prefix: "bench-" }) : null;
const pg = dataDir ? null : await createPostgresDatabase(database.adminUrl, "bench_statements");
const handle = await openDatabase(
  pg ? { kind: "postgres", url: pg.url } : { kind: "pglite", dataDir: dataDir! },
);
const app = await createApp({
  database: handle,
  apiKeys: [TEST_API_KEY],
  log: createLogger("silent"),
});
try {
  const api = new TestClient(app.handler);
  await api.call("POST", "/api/v1/projects", { body: { project: "stmts" } });
  const tokens: string[] = [];
  for (let i = 0; i < HEARTBEATS; i++) {
    const res = await api.call("POST", "/api/v1/projects/stmts/heartbeats", {
      body: { name: `job-${i}`, period_seconds: 3600, grace_seconds: 3600 },
    });
    if (res.status !== 201) throw new Error(`heartbeat: ${res.status} ${res.text}`);
    tokens.push(new URL(res.body.data.ping_url).pathname.split("/")[2]);
  }
  console.log(
    `ping statements  database=${pg ? "PostgreSQL" : "embedded (its worker thread)"} ` +
      `heartbeats=${HEARTBEATS} batch=${BATCH} batches=${BATCHES}`,
  );
  const db = handle.db.withPlugin(timer);
  const success = (token: string) => ({
    token,
    at: Date.now(),
    kind: "success" as const,
    exitCode: null,
    method: "GET",
    address: "127.0.0.1",
    body: null,
    bodyBytes: 0,
  });
  // Each heartbeat's first success moves it up (a state change, settled as such, once); the
  // batches timed are of the steady state, jobs pinging heartbeats that are up.
  // As the service records them: prepared once in the embedded database's one session.
  const prepared = pg ? undefined : new Map<string, string>();
  await recordPingBatch(db, tokens.map(success), undefined, prepared);
  let turn = 0;
  const batchMs: number[] = [];
  let cpu: Awaited<ReturnType<typeof watchCpu>> | undefined;
  for (let b = 0; b < BATCHES + 3; b++) {
    if (b === 3) { // the first batches warm the plans and the JIT
      times.clear();
      cpu = await watchCpu(
        [{ label: "this process", pid: Deno.pid, threads: true }],
        pg
          ? { adminUrl: database.adminUrl, database: new URL(pg.url).pathname.slice(1) }
          : undefined,
      );
    }
    const pings = Array.from({ length: BATCH }, () => success(tokens[turn++ % tokens.length]));
    const started = performance.now();
    await recordPingBatch(db, pings, undefined, prepared);
    if (b >= 3) batchMs.push(performance.now() - started);
  }
  const shares = await cpu!.end();
  const total = batchMs.reduce((a, b) => a + b, 0);
  const rows = [...times].sort((a, b) => b[1].ms - a[1].ms);
  const per = (ms: number) =>
    `${(ms / BATCHES).toFixed(2).padStart(8)} ms a batch ${
      (ms / BATCHES / BATCH).toFixed(3).padStart(7)
    } ms a ping`;
  for (const [label, t] of rows) {
    console.log(`${per(t.ms)}  ${String(t.calls / BATCHES).padStart(4)}×  ${label}`);
  }
  console.log(`${per(total)}  the whole transaction (begin and commit included)`);
  console.log(
    `at most ${(1000 / (total / BATCHES / BATCH)).toFixed(0)} pings a second at this size`,
  );
  shares.print(BATCHES * BATCH, "pings");
} finally {
  await app.close();
  await pg?.drop();
  if (dataDir) await Deno.remove(dataDir, { recursive: true });
}
