/**
 * A transaction that code written to open its own can run in: the domain's verbs each open a
 * transaction (`db.transaction().execute(...)`), and a caller that must commit their work with
 * its own (the audit log's entry, `server/procedures/audit.ts`) hands them this instead of its
 * transaction. Kysely refuses `transaction()` on a transaction; here it joins the outer one.
 * With `savepoints`, each is a savepoint of it, so a verb that retries after a failure of its
 * own transaction (a probe's create after a race) finds the outer transaction usable, as it
 * found the database; without (two statements fewer a call), a failure inside fails the outer
 * transaction, which every other verb does anyway: it turns the failure into its answer.
 *
 * Built with Kysely's public dialect interface over the outer transaction's `executeQuery`. An
 * isolation level or access mode asked of the inner transaction is the outer one's (PostgreSQL
 * sets them only when a transaction begins); the verbs that ask for one are reads.
 *
 * What a verb tells others once its change is stored (a cache's version moved on) waits for the
 * outer transaction's commit (`afterCommit`), and is told of the database the outer one was
 * opened on: told before, a read in between would keep the old state under the new version;
 * told of the joined object, which no one else holds, no one would hear it.
 *
 * A statement whose answer nobody reads (the audit log's entry) may wait to run last
 * (`runLast`): on the embedded database it then goes to PGlite's thread with the commit, one
 * round trip fewer (`PGliteThread.runLast`); elsewhere it runs just before the commit.
 *
 * A verb whose write already returns its resource as a viewer's read shows it (its RETURNING,
 * and what it was from a join of the table with itself) may hand it to whoever opened the joined
 * transaction (`stored`): the audit entry's "before" and "after" are then those, not reads of
 * their own, a statement and a round trip fewer each.
 *
 * @module
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  sql,
  type Transaction,
} from "kysely";
import type { Database } from "./schema.ts";

/** `database.ts`'s `Db`, named here: that module registers its commits' carrier with this one. */
type Db = Kysely<Database>;

/** The outer transaction as the one connection of a driver: nested ones are savepoints. */
function joinedDriver(trx: Transaction<Database>, savepoints: boolean): Driver {
  let depth = 0;
  const connection: DatabaseConnection = {
    executeQuery: <R>(query: CompiledQuery) => trx.executeQuery<R>(query),
    async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
      yield await trx.executeQuery<R>(query);
    },
  };
  const savepoint = () => sql.id(`joined_${depth}`);
  return {
    init: async () => {},
    acquireConnection: () => Promise.resolve(connection),
    beginTransaction: async () => {
      depth++;
      if (savepoints) await sql`savepoint ${savepoint()}`.execute(trx);
    },
    commitTransaction: async () => {
      if (savepoints) await sql`release savepoint ${savepoint()}`.execute(trx);
      depth--;
    },
    rollbackTransaction: async () => {
      if (savepoints) await sql`rollback to savepoint ${savepoint()}`.execute(trx);
      depth--;
    },
    releaseConnection: async () => {},
    destroy: async () => {},
  };
}

/** A joined transaction's database, what runs last in it, and what waits for its commit. */
const joins = new WeakMap<
  Db,
  {
    root: Db;
    last: CompiledQuery[];
    committed: ((root: Db) => void)[];
    stored: Map<string, Stored>;
  }
>();

/**
 * Databases whose commit can carry the statements that run last, by the function that hands
 * them over (false when it cannot take them this time): the embedded database in its thread.
 */
const carriers = new WeakMap<Db, (statements: readonly CompiledQuery[]) => boolean>();

/** Has `db`'s commits carry what runs last in them (`runLast`), through `carry`. */
export function carryLastWithCommit(
  db: Db,
  carry: (statements: readonly CompiledQuery[]) => boolean,
): void {
  carriers.set(db, carry);
}

/**
 * Runs `query` last in the joined transaction `db`, once its work is done, before its commit:
 * what fails it fails the commit (both roll back). Its answer is not read. At once on any
 * other database.
 */
export async function runLast(db: Db, query: CompiledQuery): Promise<void> {
  const joined = joins.get(db);
  if (joined) joined.last.push(query);
  else await db.executeQuery(query);
}

/** A resource as a viewer's read shows it: before a verb's write, after it, or both. */
export interface Stored {
  before?: unknown;
  after?: unknown;
}

/**
 * Hands a resource, as a viewer's read of it shows it before and after a write (`key` names it:
 * its type and id, `project:shop`), to whoever opened the joined transaction `db`, which takes
 * it instead of reading it (`storedIn`). The verb tells it once its write is done and nothing
 * more of its own changes what that read shows. Nothing on any other database.
 */
export function stored(db: Db, key: string, resource: Stored): void {
  joins.get(db)?.stored.set(key, resource);
}

/**
 * Whether `db` is a joined transaction, whose opener takes what a verb hands over (`stored`):
 * a verb's own statement need not fetch it for no one.
 */
export const takesStored = (db: Db): boolean => joins.has(db);

/** What a verb in the joined transaction `db` handed over as `key` (`stored`), if it did. */
export const storedIn = (db: Db, key: string): Stored | undefined => joins.get(db)?.stored.get(key);

/**
 * The database a joined transaction was opened on (`db` itself for any other): what compiles
 * queries the same way, so that a prepared query (`prepared.ts`) is compiled once for both
 * rather than once per joined transaction.
 */
export const standsFor = (db: Db): Db => joins.get(db)?.root ?? db;

/**
 * Runs `told` with the database `db` stands for once what was written through `db` is
 * committed: at once for a database or a verb's own transaction (their writes are committed,
 * or will be by the verb's own commit), after the outer transaction's commit for a joined one
 * (never when it rolls back).
 */
export function afterCommit(db: Db, told: (root: Db) => void): void {
  const joined = joins.get(db);
  if (joined) joined.committed.push(told);
  else told(db);
}

/**
 * Runs `work` in one transaction of `pool`, handing it `pool`'s transaction as a database whose
 * transactions join it (as savepoints with `savepoints`); once committed, what verbs left for
 * the commit (`afterCommit`) is told of `root` (the database `pool` is a budget of).
 */
export async function inJoinedTransaction<T>(
  { pool, root = pool, savepoints = false }: { pool: Db; root?: Db; savepoints?: boolean },
  work: (db: Db) => Promise<T>,
): Promise<T> {
  const committed: ((root: Db) => void)[] = [];
  const result = await pool.transaction().execute(async (trx) => {
    const db = joinedTransaction(trx, { savepoints });
    const last: CompiledQuery[] = [];
    joins.set(db, { root, last, committed, stored: new Map() });
    const result = await work(db);
    if (last.length > 0 && !carriers.get(pool)?.(last)) {
      for (const query of last) await trx.executeQuery(query);
    }
    return result;
  });
  for (const told of committed) told(root);
  return result;
}

/** `trx` as a database whose transactions join it (as savepoints with `savepoints`). */
function joinedTransaction(
  trx: Transaction<Database>,
  { savepoints = false }: { savepoints?: boolean } = {},
): Db {
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => joinedDriver(trx, savepoints),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}
