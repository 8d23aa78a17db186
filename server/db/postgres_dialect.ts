/**
 * Kysely over postgres.js, tuned for many small queries. A query outside a transaction goes to
 * postgres.js's pool as it is, so that postgres.js pipelines it with others on a connection;
 * only a transaction reserves a connection of its own. (kysely-postgres-js reserves one for
 * every query: that costs a round trip's worth of waiting per query and stops pipelining.)
 *
 * Waiting for a connection is bounded: a query or transaction that has not reached a connection
 * within the deadline fails with CONNECT_TIMEOUT (answered 503), so that requests do not queue
 * behind one connect attempt after another while the database is unreachable.
 *
 * `db.connection()` does not pin a connection here: state that must live on one session (SET)
 * belongs in a transaction (SET LOCAL).
 */
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import type { PendingQuery, ReservedSql, Row, Sql } from "postgres";

/** The error a request gets when no connection could be had in time; it answers 503. */
export class AcquireTimeoutError extends Error {
  override name = "AcquireTimeoutError";
  readonly code = "CONNECT_TIMEOUT";
  constructor(ms: number) {
    super(`No database connection within ${ms} ms`);
  }
}

type Query = PendingQuery<Row[]> & { state: unknown; cancel(): void };

/**
 * Cancels queries still waiting for a connection after `ms`. One coarse sweep for all queries
 * instead of a timer each: the deadline is about outages, not about milliseconds.
 */
class Watchdog {
  #waiting = new Map<Query, number>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(readonly ms: number) {}

  watch(query: Query): void {
    this.#waiting.set(query, performance.now());
    if (this.#timer === undefined) {
      const timer = setInterval(() => this.#sweep(), Math.max(25, this.ms / 10));
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  #sweep(): void {
    const now = performance.now();
    for (const [query, since] of this.#waiting) {
      // A query has its connection's state once it is sent; then the statement timeout rules.
      if (query.state !== null) this.#waiting.delete(query);
      else if (now - since > this.ms) {
        this.#waiting.delete(query);
        query.cancel(); // rejects it with 57014, which answers 503
      }
    }
    if (this.#waiting.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

class PooledConnection implements DatabaseConnection {
  reserved: ReservedSql | null = null;

  constructor(readonly sql: Sql, readonly watchdog: Watchdog) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const target = this.reserved ?? this.sql;
    const query = target.unsafe(compiled.sql, compiled.parameters as never[], {
      prepare: true,
    }) as unknown as Query;
    if (!this.reserved) this.watchdog.watch(query);
    const result = await query;
    const { command, count } = result;
    return {
      // A plain array: postgres.js's Result subclass would leak into what callers compare.
      rows: Array.from(result) as R[],
      numAffectedRows: command === "INSERT" || command === "UPDATE" || command === "DELETE" ||
          command === "MERGE"
        ? BigInt(count)
        : undefined,
    };
  }

  // deno-lint-ignore require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("Streaming queries are not supported");
  }

  /** Takes a connection of its own for a transaction, waiting at most the deadline. */
  async reserve(): Promise<void> {
    const ms = this.watchdog.ms;
    this.reserved = await new Promise<ReservedSql>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new AcquireTimeoutError(ms));
      }, ms);
      this.sql.reserve().then(
        (connection) => {
          if (late) return connection.release();
          clearTimeout(timer);
          resolve(connection);
        },
        (error) => {
          clearTimeout(timer);
          if (!late) reject(error);
        },
      );
    });
  }

  release(): void {
    this.reserved?.release();
    this.reserved = null;
  }
}

class PipelinedDriver implements Driver {
  readonly #watchdog: Watchdog;

  constructor(readonly sql: Sql, acquireTimeoutMs: number) {
    this.#watchdog = new Watchdog(acquireTimeoutMs);
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(new PooledConnection(this.sql, this.#watchdog));
  }

  async beginTransaction(connection: PooledConnection, settings: TransactionSettings) {
    await connection.reserve();
    try {
      const isolation = settings.isolationLevel
        ? ` isolation level ${settings.isolationLevel}`
        : "";
      const access = settings.accessMode ? ` ${settings.accessMode}` : "";
      await connection.executeQuery(CompiledQuery.raw(`begin${isolation}${access}`));
    } catch (error) {
      connection.release();
      throw error;
    }
  }

  async commitTransaction(connection: PooledConnection) {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(connection: PooledConnection) {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  releaseConnection(connection: PooledConnection): Promise<void> {
    connection.release();
    return Promise.resolve();
  }

  async destroy(): Promise<void> {
    this.#watchdog.stop();
    // end() waits for connection attempts under way for requests that gave up, and would
    // never settle: after twice the deadline it closes them by force.
    await this.sql.end({ timeout: (2 * this.#watchdog.ms) / 1000 });
  }
}

/** The dialect: Kysely's PostgreSQL compiler and adapter over a postgres.js pool. */
export function postgresJsDialect(
  sql: Sql,
  { acquireTimeoutMs }: { acquireTimeoutMs: number },
): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PipelinedDriver(sql, acquireTimeoutMs),
    // deno-lint-ignore no-explicit-any
    createIntrospector: (db: Kysely<any>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
