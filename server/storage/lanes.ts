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
 * The choices are the pool's as before:
 *
 * - A plain query goes to a lane with nothing in flight (the lowest first, so that a quiet server
 *   keeps using the connections it has opened), else to the one with the fewest queries in
 *   flight, onto whose connection postgres.js pipelines it. A lane held by a transaction takes
 *   none; while every lane is held, queries wait here, in order, for the first given back.
 * - A transaction (`reserve`) takes a lane with nothing in flight, or waits, in order, for the
 *   first lane to have nothing in flight.
 *
 * Only postgres.js's documented API: `unsafe()`, `reserve()` and `release()`, `listen()`, `end()`.
 *
 * @module
 */
import type { ParameterOrJSON, PendingQuery, ReservedSql, Row, RowList, Sql } from "postgres";

interface Lane {
  readonly sql: Sql;
  /** Plain queries sent on it and not settled. */
  inFlight: number;
  /** Held by a transaction, from the moment it was given to one until given back. */
  held: boolean;
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

export class Lanes {
  readonly #lanes: Lane[];
  /** Transactions waiting for a lane with nothing in flight, in order. */
  readonly #reserving: ((lane: Lane) => void)[] = [];
  /** Plain queries waiting while every lane is held, in order: each sends itself on a lane. */
  readonly #waiting: ((lane: Lane) => void)[] = [];

  /** `count` lanes, each made by `open` (a postgres.js instance of one connection). */
  constructor(count: number, open: () => Sql) {
    this.#lanes = Array.from({ length: Math.max(1, count) }, () => ({
      sql: open(),
      inFlight: 0,
      held: false,
    }));
  }

  /** The lane not held with the fewest queries in flight (the lowest first); none if all are held. */
  #leastBusy(): Lane | undefined {
    let best: Lane | undefined;
    for (const lane of this.#lanes) {
      if (lane.held || (best && lane.inFlight >= best.inFlight)) continue;
      best = lane;
      if (lane.inFlight === 0) break;
    }
    return best;
  }

  /**
   * A plain query, sent on the least busy lane not held by a transaction; while every lane is
   * held, it waits for the first to be given back, as it would in one postgres.js pool.
   */
  unsafe<T extends Row[]>(
    text: string,
    parameters?: ParameterOrJSON<never>[],
    options?: { prepare?: boolean },
  ): Promise<RowList<T>> {
    const lane = this.#leastBusy();
    if (lane) return this.#send<T>(lane, text, parameters, options);
    return new Promise<RowList<T>>((resolve, reject) => {
      this.#waiting.push((lane) =>
        this.#send<T>(lane, text, parameters, options).then(resolve, reject)
      );
    });
  }

  #send<T extends Row[]>(
    lane: Lane,
    text: string,
    parameters?: ParameterOrJSON<never>[],
    options?: { prepare?: boolean },
  ): PendingQuery<T> {
    const query = lane.sql.unsafe<T>(text, parameters, options);
    lane.inFlight++;
    const settled = () => {
      if (--lane.inFlight === 0 && !lane.held) this.#idle(lane);
    };
    query.then(settled, settled);
    return query;
  }

  /**
   * A connection of its own for a transaction: a lane with nothing in flight now, or else the
   * first to have nothing in flight (plain queries keep going to the lanes meanwhile, pipelined,
   * as in one postgres.js pool).
   */
  async reserve(): Promise<Reservation> {
    let lane = this.#leastBusy();
    if (lane?.inFlight === 0) lane.held = true;
    else lane = await new Promise<Lane>((resolve) => this.#reserving.push(resolve));
    let sql: ReservedSql;
    try {
      sql = await lane.sql.reserve();
    } catch (error) {
      this.#giveBack(lane);
      throw error;
    }
    let done = false;
    const leave = () => {
      if (done) return false;
      done = true;
      this.#giveBack(lane);
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

  /** A lane a transaction held is free again: queries that waited for one go first. */
  #giveBack(lane: Lane): void {
    lane.held = false;
    while (this.#waiting.length > 0) {
      const next = this.#leastBusy();
      if (!next) break;
      this.#waiting.shift()!(next); // counted in flight at once, so the next one spreads
    }
    if (lane.inFlight === 0) this.#idle(lane);
  }

  /** A lane with nothing in flight and not held: the first waiting transaction takes it. */
  #idle(lane: Lane): void {
    const next = this.#reserving.shift();
    if (!next) return;
    lane.held = true;
    next(lane);
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
