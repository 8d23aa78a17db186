/**
 * A PostgreSQL pool as lanes: one postgres.js instance of one connection (`max: 1`) per
 * connection the pool may open, and the choice of lane made here, for each query, by what each
 * lane has in flight.
 *
 * Why not one postgres.js instance of `max` connections: when every connection is busy,
 * postgres.js pipelines a query onto one of them, taken from the front of its queue of busy
 * connections and put back at the end. That queue (`src/queue.js`, 3.4.9) leaves a slot behind
 * for every connection so taken, and clears them only when it hands out its last entry, which
 * it never does while the pool stays full; and it finds a connection among them by scanning
 * every slot. A server kept at a full pool grew that array by a slot a query and spent more on
 * each query than on the one before. With one connection to a lane, that queue never holds more
 * than one connection, so it is emptied at every turn.
 *
 * The choice is the pool's as before: a lane with nothing in flight first (the lowest first, so
 * that a quiet server keeps using the connections it has opened), then the one with the fewest
 * queries in flight, onto whose connection postgres.js pipelines the query. A lane held by a
 * transaction (`reserve`) is taken for a plain query only when every lane is held.
 *
 * Only postgres.js's documented API: `unsafe()`, `reserve()` and `release()`, `listen()`, `end()`.
 *
 * @module
 */
import type { ParameterOrJSON, PendingQuery, ReservedSql, Row, Sql } from "postgres";

interface Lane {
  readonly sql: Sql;
  /** Plain queries sent on it and not settled. */
  inFlight: number;
  /** Transactions holding its connection, or waiting for it. */
  held: number;
}

/** A lane's connection taken by a transaction: its queries go to `sql`, and it is given back once. */
export interface Reservation {
  readonly sql: ReservedSql;
  /** Gives the connection back to its lane. */
  release(): void;
  /**
   * Lets the lane go without giving the connection back: for a connection that has closed,
   * which postgres.js took back into its closed connections itself.
   */
  forget(): void;
}

/** A transaction's claim counts against a lane as this many queries in flight. */
const HELD_WEIGHT = 1 << 20;

export class Lanes {
  readonly #lanes: Lane[];

  /** `count` lanes, each made by `open` (a postgres.js instance of one connection). */
  constructor(count: number, open: () => Sql) {
    this.#lanes = Array.from({ length: Math.max(1, count) }, () => ({
      sql: open(),
      inFlight: 0,
      held: 0,
    }));
  }

  get size(): number {
    return this.#lanes.length;
  }

  /** The lane a query or transaction goes to now. */
  #pick(): Lane {
    const lanes = this.#lanes;
    let best = lanes[0];
    let bestLoad = best.inFlight + best.held * HELD_WEIGHT;
    for (let i = 1; i < lanes.length && bestLoad > 0; i++) {
      const lane = lanes[i];
      const load = lane.inFlight + lane.held * HELD_WEIGHT;
      if (load < bestLoad) {
        best = lane;
        bestLoad = load;
      }
    }
    return best;
  }

  /** A plain query, sent on the least busy lane. */
  unsafe<T extends Row[]>(
    text: string,
    parameters?: ParameterOrJSON<never>[],
    options?: { prepare?: boolean },
  ): PendingQuery<T> {
    const lane = this.#pick();
    const query = lane.sql.unsafe<T>(text, parameters, options);
    lane.inFlight++;
    const settled = () => {
      lane.inFlight--;
    };
    query.then(settled, settled);
    return query;
  }

  /** A connection of its own for a transaction, on the least busy lane. */
  async reserve(): Promise<Reservation> {
    const lane = this.#pick();
    lane.held++;
    let sql: ReservedSql;
    try {
      sql = await lane.sql.reserve();
    } catch (error) {
      lane.held--;
      throw error;
    }
    let done = false;
    const leave = () => {
      if (done) return false;
      done = true;
      lane.held--;
      return true;
    };
    return {
      sql,
      release: () => {
        if (leave()) sql.release();
      },
      forget: () => {
        leave();
      },
    };
  }

  /** postgres.js's `listen`, on a connection of its own (it opens one for listening). */
  listen(...args: Parameters<Sql["listen"]>): ReturnType<Sql["listen"]> {
    return this.#lanes[0].sql.listen(...args);
  }

  /** Ends every lane's connection; `timeout` (seconds) as postgres.js's `end`. */
  async end(options?: { timeout?: number }): Promise<void> {
    await Promise.all(this.#lanes.map((lane) => lane.sql.end(options)));
  }
}
