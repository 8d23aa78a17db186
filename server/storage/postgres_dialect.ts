/**
 * Kysely over postgres.js, tuned for many small queries. A query outside a transaction goes to
 * the pool's least busy connection at once (`lanes.ts`), so that postgres.js pipelines it with
 * others on that connection; only a transaction reserves a connection of its own. (Reserving a
 * connection for every query would cost a round trip's worth of waiting per query and stop
 * pipelining.)
 *
 * Waiting for a connection is bounded, so that requests do not queue behind one connect attempt
 * after another while the database is unreachable: see `ConnectionGate`. A query or transaction
 * that gets no connection within the deadline fails with CONNECT_TIMEOUT (answered 503).
 *
 * Each query may have a deadline of its own too (`queryDeadlineMs`), enforced here rather than
 * by the server, which may be the one that cannot be reached: past it, the query fails with
 * QUERY_DEADLINE (answered 503) at once, and the connections that have been waiting for an
 * answer since it was sent are ended (`ConnectionWatch`, through postgres.js's `socket`
 * option), so that the pool heals without waiting for TCP timeouts. See `Deadline`.
 *
 * Only postgres.js's documented API is used: `unsafe()` queries awaited as promises,
 * `reserve()` and `release()`, `end()` (through `Lanes`), and the `socket` option (in
 * database.ts).
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
import type { Row, RowList } from "postgres";
import type { ConnectionWatch } from "./connection_watch.ts";
import type { Lanes, Reservation } from "./lanes.ts";
import { PoolCounters } from "./pool_stats.ts";
import { isConnectionFailureCode } from "./unavailable.ts";

/** The error a request gets when no connection could be had in time; it answers 503. */
export class AcquireTimeoutError extends Error {
  override name = "AcquireTimeoutError";
  readonly code = "CONNECT_TIMEOUT";
  constructor(ms: number) {
    super(`No database connection within ${ms} ms`);
  }
}

/**
 * The error a query gets when the database has not answered it within its deadline; it answers
 * 503. Whether the database carried it out is unknown: for a write, as for any connection lost.
 */
export class QueryDeadlineError extends Error {
  override name = "QueryDeadlineError";
  readonly code = "QUERY_DEADLINE";
  constructor(ms: number) {
    super(`The database did not answer within ${ms} ms`);
  }
}

/** How a query or reservation ended, as far as connections go. */
function outcome(error: unknown): "connection failed" | "server answered" | "neither" {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (typeof code !== "string") return "neither";
  if (isConnectionFailureCode(code)) return "connection failed";
  return /^[0-9A-Z]{5}$/.test(code) ? "server answered" : "neither"; // a SQLSTATE
}

type Rows = RowList<Row[]>;

interface Held {
  since: number;
  run(): void;
  fail(error: unknown): void;
}

/** What a deadline needs to know of a query: when it went to postgres.js, if it did. */
interface Sending {
  sentAt?: number;
  /** Past its deadline: a query still held must not be sent any more. */
  abandoned?: boolean;
}

/**
 * How long the bytes of a query may take to reach the socket after postgres.js has it (it
 * writes them on its next turn, later when the event loop is busy), at most: a connection that
 * started waiting this long after the query was sent still counts as waiting since then.
 */
const sendSlackMs = (deadlineMs: number) => Math.min(250, deadlineMs / 4);

/** A query under a deadline: when it passes it, and how it is failed then. */
interface Bounded {
  at: number;
  sending: Sending;
  reject(error: unknown): void;
}

/**
 * The client-side deadline of each query (none without `ms`). Past it, the query is failed with
 * QueryDeadlineError at once, and every connection of the pool that has been waiting for an
 * answer since the query was sent, or longer, is ended: the query's own connection is among
 * them, and any other has gone as long without a byte. (The deadline is one for the whole
 * pool, so those connections' queries are past theirs too.) Their queries fail with
 * CONNECTION_CLOSED, and postgres.js opens new connections for the next ones.
 *
 * A connection that answered an earlier query and then went silent on a later one, pipelined
 * behind it, is not seen as waiting until it is sent another query; its queries still fail at
 * their deadline, and that next query's deadline ends it.
 *
 * One sweep (every twentieth of the deadline, 5 to 50 ms) checks the queries under way, rather
 * than a timer each: a timer costs more than the query's own bookkeeping, and the queries'
 * deadlines come in the order they began. It runs only while a query is under way.
 */
class Deadline {
  /** The queries under way, in the order they began: by deadline, since `ms` is one for all. */
  readonly #pending = new Set<Bounded>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(readonly ms: number | undefined, readonly watch: ConnectionWatch | undefined) {}

  bound<T>(pending: PromiseLike<T>, sending: Sending): Promise<T> {
    const ms = this.ms;
    if (!ms) return Promise.resolve(pending);
    const settled = Promise.withResolvers<T>();
    const bounded: Bounded = { at: performance.now() + ms, sending, reject: settled.reject };
    this.#pending.add(bounded);
    this.#timer ??= setInterval(() => this.#sweep(), Math.min(50, Math.max(5, ms / 20)));
    // Whatever the query does after the deadline (it fails once its connection is ended)
    // is settled here, unseen.
    pending.then((value) => {
      this.#settle(bounded);
      settled.resolve(value);
    }, (error) => {
      this.#settle(bounded);
      settled.reject(error);
    });
    return settled.promise;
  }

  #settle(bounded: Bounded): void {
    if (this.#pending.delete(bounded) && this.#pending.size === 0) this.#stop();
  }

  #sweep(): void {
    const now = performance.now();
    for (const bounded of this.#pending) {
      if (bounded.at > now) break;
      this.#pending.delete(bounded);
      const { sending } = bounded;
      sending.abandoned = true;
      if (sending.sentAt !== undefined) {
        this.watch?.discardWaitingSince(sending.sentAt + sendSlackMs(this.ms!));
      }
      bounded.reject(new QueryDeadlineError(this.ms!));
    }
    if (this.#pending.size === 0) this.#stop();
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * Decides when a query may go to postgres.js's pool. postgres.js queues a query that finds no
 * open connection and hands it to one connect attempt after another, and it tells nothing of
 * where a pending query stands. `cancel()` takes a queued query back, but for one already sent
 * it asks the server over a connection of its own, and if that connection fails the failure is
 * an unhandled rejection, which ends a Deno process. So queries are not left to queue there
 * while the database may be unreachable:
 *
 * - While connections work (the last query or reservation to end succeeded, or the server
 *   answered it with an error of its own), a query goes to the pool at once: it is pipelined
 *   with others, and a slow one is the statement timeout's business. (If it then finds no open
 *   connection, postgres.js's `connect_timeout` bounds each connect attempt.)
 * - Otherwise (at start, and after a connect attempt failed or a connection was lost), queries
 *   are held here and one probe (`select 1`) goes to the pool. Its success lets the held queries
 *   go; its failure fails them at once with its error; a query held longer than the deadline
 *   fails with AcquireTimeoutError. A held query never reached the database, so failing it
 *   leaves no write behind.
 *
 * One coarse sweep for the held queries instead of a timer each: the deadline is about outages,
 * not about milliseconds.
 */
class ConnectionGate {
  #up = false;
  #held = new Set<Held>();
  #timer: ReturnType<typeof setInterval> | undefined;
  /** When the probe under way started; a probe older than the deadline no longer counts. */
  #probeSince: number | undefined;

  constructor(
    readonly lanes: Lanes,
    readonly ms: number,
    readonly deadline: Deadline,
    readonly counters: PoolCounters,
  ) {}

  /** Runs a query on the pool, held back first while connections are not known to work. */
  query(compiled: CompiledQuery, sending: Sending = {}): Promise<Rows> {
    const send = () => {
      sending.sentAt = performance.now();
      return this.counters.track(this.watch(
        this.lanes.unsafe<Row[]>(compiled.sql, compiled.parameters as never[], { prepare: true }),
      ));
    };
    if (this.#up) return send();
    const { counters } = this;
    counters.held++;
    return new Promise<Rows>((resolve, reject) => {
      this.#hold({
        since: performance.now(),
        run: () => {
          counters.held--;
          if (!sending.abandoned) send().then(resolve, reject);
        },
        fail: (error) => {
          counters.held--;
          reject(error);
        },
      });
    });
  }

  /** Awaits a query or reservation, and learns from how it ends whether connections work. */
  async watch<T>(pending: PromiseLike<T>): Promise<T> {
    try {
      const result = await pending;
      this.#connected();
      return result;
    } catch (error) {
      const how = outcome(error);
      if (how === "connection failed") this.#up = false;
      else if (how === "server answered") this.#connected();
      throw error;
    }
  }

  #hold(held: Held): void {
    this.#held.add(held);
    if (this.#timer === undefined) {
      const timer = setInterval(() => this.#sweep(), Math.max(25, this.ms / 10));
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
    this.#probe();
  }

  #probe(): void {
    const now = performance.now();
    if (this.#probeSince !== undefined && now - this.#probeSince <= this.ms) return;
    this.#probeSince = now;
    const settled = () => {
      if (this.#probeSince === now) this.#probeSince = undefined;
    };
    const sending = { sentAt: now };
    this.deadline.bound(this.watch(this.lanes.unsafe("select 1")), sending).then(
      settled,
      (error) => {
        settled();
        if (!this.#up) this.#release((held) => held.fail(error));
      },
    );
  }

  #connected(): void {
    this.#up = true;
    if (this.#held.size > 0) this.#release((held) => held.run());
  }

  #release(each: (held: Held) => void): void {
    const held = [...this.#held];
    this.#held.clear();
    this.stop();
    for (const h of held) each(h);
  }

  #sweep(): void {
    const now = performance.now();
    for (const held of this.#held) {
      if (now - held.since > this.ms) {
        this.#held.delete(held);
        held.fail(new AcquireTimeoutError(this.ms));
      }
    }
    if (this.#held.size === 0) this.stop();
    else this.#probe(); // a probe stuck on a connection that never answers is not waited for
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

class PooledConnection implements DatabaseConnection {
  reserved: Reservation | null = null;
  /**
   * The query of this reserved connection that passed its deadline (the connection was ended
   * then, unless its bytes were sent too late to tell): how it ends decides what becomes of the
   * connection, in `release`.
   */
  lost: Promise<unknown> | null = null;
  /**
   * The connection failure a query of this reserved connection met (CONNECTION_CLOSED when
   * another query's deadline ended it, a reset, a server going away). postgres.js has closed
   * the connection then, and hands a reserved connection every query it is given, closed or
   * not: it writes it from a `setImmediate` on a socket that is null, and the TypeError this
   * throws is uncaught and ends the process. So nothing more is sent on it, no
   * rollback included (the server rolls back a transaction whose connection went), and it is
   * not released: postgres.js took it back into its closed connections when it closed, and
   * releasing it would put it among the open ones.
   */
  broken: unknown = null;
  /**
   * The transaction's `begin`, sent and not waited for: its answer is read with the first
   * statement's, which went right behind it (`PipelinedDriver.beginTransaction`).
   */
  begun: Promise<unknown> | null = null;

  constructor(readonly gate: ConnectionGate) {}

  /** Sends `begin` without waiting for its answer (see `begun`). */
  begin(text: string): void {
    const begun = this.executeQuery(CompiledQuery.raw(text));
    begun.catch(() => {}); // read with the next statement's answer, or by the rollback
    this.begun = begun;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const { deadline, counters } = this.gate;
    let result: Rows;
    if (this.reserved) {
      const begun = this.begun;
      this.begun = null;
      if (this.broken) throw this.broken;
      const sending = { sentAt: performance.now() };
      const pending = counters.track(this.gate.watch(
        this.reserved.sql.unsafe<Row[]>(compiled.sql, compiled.parameters as never[], {
          prepare: true,
        }),
      ));
      counters.reservedBusy++;
      try {
        result = await deadline.bound(pending, sending);
      } catch (error) {
        if (error instanceof QueryDeadlineError) this.lost = pending;
        else if (outcome(error) === "connection failed") this.broken = error;
        throw error;
      } finally {
        counters.reservedBusy--;
      }
      // Answered in order: a begin fails only with its connection, which failed this too.
      await begun;
    } else {
      const sending: Sending = {};
      result = await deadline.bound(this.gate.query(compiled, sending), sending);
    }
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
    const { lanes, ms, counters } = this.gate;
    counters.reserving++;
    this.reserved = await new Promise<Reservation>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new AcquireTimeoutError(ms));
      }, ms);
      this.gate.watch(lanes.reserve()).then(
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
    }).finally(() => counters.reserving--);
    counters.reserved++;
  }

  release(): void {
    const { reserved, lost, broken } = this;
    this.reserved = null;
    this.lost = null;
    this.broken = null;
    if (!reserved) return;
    this.gate.counters.reserved--;
    if (broken) return reserved.forget();
    if (!lost) return reserved.release();
    // A connection ended at a deadline is postgres.js's again once it has closed, and must not
    // be released (that would hand the pool a closed connection). One that answered after all
    // (its query's bytes left late) is rolled back, then released.
    lost.then(() => true, (error) => outcome(error) !== "connection failed").then((alive) => {
      if (!alive) return reserved.forget();
      reserved.sql.unsafe("rollback").then(() => reserved.release(), () => reserved.forget());
    });
  }
}

class PipelinedDriver implements Driver {
  readonly #gate: ConnectionGate;

  constructor(readonly lanes: Lanes, options: DialectOptions) {
    this.#gate = new ConnectionGate(
      lanes,
      options.acquireTimeoutMs,
      new Deadline(options.queryDeadlineMs, options.watch),
      options.counters ?? new PoolCounters(),
    );
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(new PooledConnection(this.#gate));
  }

  async beginTransaction(connection: PooledConnection, settings: TransactionSettings) {
    await connection.reserve();
    try {
      const isolation = settings.isolationLevel
        ? ` isolation level ${settings.isolationLevel}`
        : "";
      const access = settings.accessMode ? ` ${settings.accessMode}` : "";
      // Not waited for: the first statement is pipelined behind it, a round trip fewer a
      // transaction (a group commit of pings is four round trips without this).
      connection.begin(`begin${isolation}${access}`);
    } catch (error) {
      connection.release();
      throw error;
    }
  }

  async commitTransaction(connection: PooledConnection) {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(connection: PooledConnection) {
    // A connection ended at a deadline, or lost, has nothing to roll back: the server does
    // that itself when the connection goes, and waiting for it here would only delay the
    // answer (and writing on a lost one would throw uncaught: see `broken`).
    const begun = connection.begun;
    connection.begun = null;
    await begun?.catch(() => {});
    if (connection.lost || connection.broken) return;
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  releaseConnection(connection: PooledConnection): Promise<void> {
    connection.release();
    return Promise.resolve();
  }

  async destroy(): Promise<void> {
    this.#gate.stop();
    // end() waits for connection attempts under way for requests that gave up, and would
    // never settle: after twice the deadline it closes them by force.
    await this.lanes.end({ timeout: (2 * this.#gate.ms) / 1000 });
  }
}

export interface DialectOptions {
  /** How long a query may wait for a connection. */
  acquireTimeoutMs: number;
  /** How long a query may wait for its answer, connection included; none when not given. */
  queryDeadlineMs?: number;
  /** The pool's connections, made by its `socket` option: ended when they stop answering. */
  watch?: ConnectionWatch;
  /** Kept up to date with queries in flight and waiting, for `/metrics` (`pool_stats.ts`). */
  counters?: PoolCounters;
}

/** The dialect: Kysely's PostgreSQL compiler and adapter over a pool of postgres.js lanes. */
export function postgresJsDialect(lanes: Lanes, options: DialectOptions): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PipelinedDriver(lanes, options),
    // deno-lint-ignore no-explicit-any
    createIntrospector: (db: Kysely<any>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
