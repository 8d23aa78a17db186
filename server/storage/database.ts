import type { PGlite } from "@electric-sql/pglite";
import { Kysely, PGliteDialect } from "kysely";
import { createConnectionWatch } from "./connection_watch.ts";
import { embeddedStartParams, PGliteThread, type ThreadMemory } from "./pglite_thread.ts";
import { carryLastWithCommit } from "./joined.ts";
import { Lanes } from "./lanes.ts";
import { postgresJsDialect } from "./postgres_dialect.ts";
import {
  countedPGlite,
  embeddedPoolStats,
  PoolCounters,
  type PoolStats,
  postgresPoolStats,
} from "./pool_stats.ts";
import type { Database } from "./schema.ts";
import type { Config } from "../base/config.ts";

export type Db = Kysely<Database>;

/** Where the data lives: a PostgreSQL server, or an embedded PGlite. */
export type DatabaseTarget =
  | {
    kind: "postgres";
    url: string;
    poolSize?: number;
    /** How long opening a connection may take (ms); 1500 unless given. */
    connectTimeoutMs?: number;
    /** The server-side limit on one statement (ms); none unless given. */
    statementTimeoutMs?: number;
    /**
     * The client-side deadline of each query (ms), for when the server cannot answer at all
     * (see `postgres_dialect.ts`); none unless given. Work with a budget of its own
     * (`withBudget`) has its own deadline.
     */
    queryDeadlineMs?: number;
  }
  | {
    kind: "pglite";
    dataDir?: string;
    loadDataDir?: Blob;
    /**
     * Where PGlite runs: in a worker thread of its own, so that a long statement does not stop
     * the HTTP edge (see `pglite_thread.ts`), or in the calling thread, where `pglite` is at
     * hand (tests dump and clone it). By default a database on disk (`dataDir`: the server's)
     * runs in a worker, one in memory (tests') in the calling thread.
     */
    thread?: "worker" | "caller";
  };

export interface DatabaseHandle {
  db: Db;
  kind: DatabaseTarget["kind"];
  /** The embedded instance, when it runs in the calling thread (tests clone it). */
  pglite?: PGlite;
  /** What each pool is doing now, for `/metrics` (`pool_stats.ts`). */
  poolStats?(): PoolStats[];
  /** The embedded database's thread's memory, when it runs in a worker, for `/metrics`. */
  threadMemory?(): Promise<ThreadMemory>;
  /**
   * On PostgreSQL: calls `onNotify` for each `NOTIFY` on `channel` (from any process), on a
   * connection of its own that reconnects by itself, and once more each time it (re)connects, for
   * what was sent while it was away. Resolves, once listening, to the function that stops it.
   */
  listen?(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * Work that is not a request's, with a budget of its own instead of the request's statement
 * timeout and query deadline: how long one statement may take (the server's statement timeout;
 * the client's deadline is a second more), and the connections it may use. Each runs on a pool
 * of its own (opened when first used, its idle connections closed after a minute), so that a
 * connection busy with such work for longer than a request's deadline is never taken for a
 * request's connection that stopped answering. Documented in docs/operations.md.
 */
export const BUDGETS = {
  /** Archiving and deleting a project (`deleteProject`): 100,000 probes take seconds. */
  projectDelete: { ms: 120_000, connections: 2 },
  /** The probe runner's batches (claims, recording, schedules, leases) and pruning. */
  runner: { ms: 30_000, connections: 4 },
  /**
   * Remote locations' claims and the poll of their waiting claims (`server/runner/claim_waits.ts`):
   * a pool apart from the built-in runner's, so that remote runners never take its connections.
   */
  remoteRuns: { ms: 30_000, connections: 2 },
  /**
   * The dashboard's overview of every project (`getOverview` without a project): one pass over
   * 30 days of rollups for every probe, about 0.2–1 s for 1,000 probes and growing with probes ×
   * hours; two at a time, so that overviews never take the requests' connections.
   */
  overview: { ms: 15_000, connections: 2 },
  /** Migrations at start-up, and waiting for another process's migrations. */
  migrations: { ms: 600_000, connections: 1 },
} as const;

export type Budget = keyof typeof BUDGETS;

/** How much longer than a budget's statement timeout its client-side deadline is. */
const BUDGET_DEADLINE_MARGIN_MS = 1000;

/** Each PostgreSQL database's pools for work with a budget, by its request `Db`. */
const budgetedPools = new WeakMap<Db, (budget: Budget) => Db>();

/**
 * The database for work with a budget of its own (`BUDGETS`): on PostgreSQL, the pool kept for
 * it; on the embedded database (no statement timeout, no network) and for a transaction, `db`
 * itself.
 */
export function withBudget(db: Db, budget: Budget): Db {
  return budgetedPools.get(db)?.(budget) ?? db;
}

/** Opens the database named by the target; the same queries and migrations serve both kinds. */
export async function openDatabase(target: DatabaseTarget): Promise<DatabaseHandle> {
  if (target.kind === "postgres") {
    // Loaded here, not at start: a server on the embedded database never needs its code.
    const { default: postgres } = await import("postgres");
    const connectTimeout = target.connectTimeoutMs ?? 1500;
    const pools: (() => PoolStats)[] = [];
    let mainLanes: Lanes | undefined;
    const pool = ({ name, max, statementTimeoutMs, queryDeadlineMs, idleTimeoutS }: {
      name: string;
      max: number;
      statementTimeoutMs: number;
      queryDeadlineMs?: number;
      idleTimeoutS?: number;
    }): Db => {
      // Each connection through our own socket (postgres.js's documented `socket` option),
      // so that one that stops answering can be ended: see connection_watch.ts.
      const watch = createConnectionWatch();
      const options = {
        max: 1, // a lane's
        // A database that is down or unreachable answers 503 fast instead of holding requests.
        connect_timeout: connectTimeout / 1000,
        // postgres.js waits up to 20 s (3^failures / 100) before reconnecting after failures,
        // and requests queue behind that wait: capped at 250 ms, an outage still answers fast
        // and the service reconnects at once when the database is back.
        backoff: (failures: number) => Math.min(0.01 * 2 ** failures, 0.25),
        ...(statementTimeoutMs > 0 && { connection: { statement_timeout: statementTimeoutMs } }),
        ...(idleTimeoutS !== undefined && { idle_timeout: idleTimeoutS }),
        socket: watch.connect,
        onnotice: () => {},
      };
      // One postgres.js instance a connection: see lanes.ts.
      const lanes = new Lanes(max, () => postgres(target.url, options));
      mainLanes ??= lanes;
      const counters = new PoolCounters();
      pools.push(() => postgresPoolStats(name, max, watch, counters));
      return new Kysely<Database>({
        dialect: postgresJsDialect(lanes, {
          acquireTimeoutMs: connectTimeout,
          queryDeadlineMs,
          watch,
          counters,
        }),
      });
    };
    const db = pool({
      name: "main",
      max: target.poolSize ?? 10,
      statementTimeoutMs: target.statementTimeoutMs ?? 0,
      queryDeadlineMs: target.queryDeadlineMs,
    });
    const budgets = new Map<Budget, Db>();
    budgetedPools.set(db, (budget) => {
      let budgeted = budgets.get(budget);
      if (!budgeted) {
        const { ms, connections } = BUDGETS[budget];
        budgeted = pool({
          name: budget,
          max: connections,
          statementTimeoutMs: ms,
          queryDeadlineMs: ms + BUDGET_DEADLINE_MARGIN_MS,
          idleTimeoutS: 60,
        });
        budgets.set(budget, budgeted);
      }
      return budgeted;
    });
    return {
      db,
      kind: "postgres",
      poolStats: () => pools.map((stats) => stats()),
      listen: async (channel, onNotify) => {
        const { unlisten } = await mainLanes!.listen(channel, () => onNotify(), onNotify);
        return unlisten;
      },
      close: async () => {
        budgetedPools.delete(db);
        await Promise.all([db, ...budgets.values()].map((pooled) => pooled.destroy()));
      },
    };
  }
  const { dataDir, loadDataDir } = target;
  if ((target.thread ?? (dataDir === undefined ? "caller" : "worker")) === "worker") {
    const thread = await PGliteThread.open({ dataDir, loadDataDir });
    const counters = new PoolCounters();
    const db = new Kysely<Database>({
      dialect: new PGliteDialect({ pglite: countedPGlite(thread, counters) }),
    });
    carryLastWithCommit(
      db,
      (statements) =>
        thread.runLast(statements.map(({ sql, parameters }) => ({ sql, params: parameters }))),
    );
    return {
      db,
      kind: "pglite",
      poolStats: () => [embeddedPoolStats(counters)],
      threadMemory: () => thread.memory(),
      close: async () => {
        await db.destroy();
        await thread.close();
      },
    };
  }
  const pglite = await openEmbedded({ dataDir, loadDataDir });
  return embeddedHandle(pglite, async () => {
    if (!pglite.closed) await pglite.close();
  });
}

/** Opens PGlite in the calling thread with the service's settings (`embeddedStartParams`). */
export async function openEmbedded(
  { dataDir, loadDataDir }: { dataDir?: string; loadDataDir?: Blob },
): Promise<PGlite> {
  // Loaded here, not at start: the server's own thread never runs PGlite (its worker does).
  const { PGlite } = await import("@electric-sql/pglite");
  return await PGlite.create({
    dataDir,
    loadDataDir,
    startParams: embeddedStartParams(PGlite.defaultStartParams),
  });
}

/**
 * A handle on a PGlite instance open in the calling thread. Closing the handle ends its Kysely
 * instance, then calls `close` with the PGlite instance, which is left open otherwise: the
 * caller that opened it decides (`openDatabase` closes it; tests may use it again).
 */
export function embeddedHandle(pglite: PGlite, close: () => Promise<void>): DatabaseHandle {
  let ended = false;
  const refused = () => Promise.reject(new Error("The database handle is closed"));
  const counters = new PoolCounters();
  const db = new Kysely<Database>({
    dialect: new PGliteDialect({
      pglite: countedPGlite({
        get closed() {
          return ended || pglite.closed;
        },
        get ready() {
          return pglite.ready;
        },
        get waitReady() {
          return pglite.waitReady;
        },
        // Kysely closes its PGlite when destroyed: that is `close`'s to decide.
        close: () => Promise.resolve(),
        query: (query, params, options) => ended ? refused() : pglite.query(query, params, options),
        transaction: (callback) => ended ? refused() : pglite.transaction(callback),
      }, counters),
    }),
  });
  return {
    db,
    kind: "pglite",
    pglite,
    poolStats: () => [embeddedPoolStats(counters)],
    close: async () => {
      await db.destroy();
      ended = true;
      await close();
    },
  };
}

/** The database a configuration names: PostgreSQL when a URL is given, else PGlite on disk. */
export function databaseTarget(
  config: Pick<
    Config,
    | "databaseUrl"
    | "dataDir"
    | "databasePoolSize"
    | "databaseConnectTimeoutMs"
    | "databaseStatementTimeoutMs"
    | "databaseQueryDeadlineMs"
  >,
): DatabaseTarget {
  return config.databaseUrl
    ? {
      kind: "postgres",
      url: config.databaseUrl,
      poolSize: config.databasePoolSize,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      queryDeadlineMs: config.databaseQueryDeadlineMs,
    }
    : { kind: "pglite", dataDir: `${config.dataDir}/pgdata` };
}
