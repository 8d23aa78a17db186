/**
 * What each database pool is doing, from our own counters: postgres.js documents no pool
 * statistics, and PGlite has one connection. Read at scrape time by `/metrics`
 * (`server/operations/metrics/database.ts`); counting costs an increment and a decrement per query.
 *
 * @module
 */
import type { PGlite } from "kysely";
import type { ConnectionWatch } from "./connection_watch.ts";

/** One pool's figures at a moment. */
export interface PoolStats {
  /** `main` (requests), a budget's name (`runner`, `projectDelete`, `migrations`), `embedded`. */
  pool: string;
  /** Connections it may open. */
  max: number;
  /** Connections open now. */
  open: number;
  /** Connections in use: waiting for a query's answer, or held by a transaction. */
  inUse: number;
  /** Queries and transactions waiting for a connection. */
  waiting: number;
  /** Queries handed to the database and not answered yet (waiting ones included). */
  inFlight: number;
}

/** Counts kept by a dialect as queries come and go. */
export class PoolCounters {
  /** Queries sent and not answered. */
  inFlight = 0;
  /** Queries held back while connections are not known to work (`ConnectionGate`). */
  held = 0;
  /** Transactions waiting for a connection of their own. */
  reserving = 0;
  /** Connections reserved by transactions. */
  reserved = 0;
  /** Reserved connections with a query of theirs unanswered. */
  reservedBusy = 0;

  /** Counts `pending` in flight until it settles. */
  track<T>(pending: Promise<T>): Promise<T> {
    this.inFlight++;
    pending.then(this.#settled, this.#settled);
    return pending;
  }

  #settled = () => {
    this.inFlight--;
  };
}

/**
 * A postgres.js pool's figures. With pipelining, a connection waiting for an answer may have
 * more queries queued behind the one it runs: those count as waiting, with the queries held
 * while the database cannot be reached and the transactions waiting for a connection.
 */
export function postgresPoolStats(
  pool: string,
  max: number,
  watch: ConnectionWatch,
  counters: PoolCounters,
): PoolStats {
  let busy = 0;
  for (const socket of watch.sockets) if (socket.waitingSince !== undefined) busy++;
  const open = watch.sockets.size;
  const idleReserved = Math.max(0, counters.reserved - counters.reservedBusy);
  return {
    pool,
    max,
    open,
    inUse: Math.min(open, busy + idleReserved),
    waiting: counters.held + counters.reserving + Math.max(0, counters.inFlight - busy),
    inFlight: counters.inFlight,
  };
}

/**
 * The embedded database's figures: one connection, which runs one query or transaction at a
 * time (in the worker thread, or in the calling thread). What waits for it is mostly queued by
 * Kysely (its connection mutex) before it reaches PGlite, unseen here: `waiting` counts only
 * what PGlite itself holds.
 */
export function embeddedPoolStats(counters: PoolCounters): PoolStats {
  const { inFlight } = counters;
  return {
    pool: "embedded",
    max: 1,
    open: 1,
    inUse: inFlight > 0 ? 1 : 0,
    waiting: Math.max(0, inFlight - 1),
    inFlight,
  };
}

/**
 * PGlite (or `PGliteThread`) as Kysely's dialect uses it, counting each query and transaction
 * in flight; a transaction counts once, its queries inside it not again.
 */
export function countedPGlite(inner: PGlite, counters: PoolCounters): PGlite {
  return {
    get closed() {
      return inner.closed;
    },
    get ready() {
      return inner.ready;
    },
    get waitReady() {
      return inner.waitReady;
    },
    close: () => inner.close(),
    query: (query, params, options) => counters.track(inner.query(query, params, options)),
    transaction: (callback) => counters.track(inner.transaction(callback)),
  };
}
