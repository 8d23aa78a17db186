/**
 * A transaction that code written to open its own can run in: the domain's verbs each open a
 * transaction (`db.transaction().execute(...)`), and a caller that must commit their work with
 * its own (the audit log's entry, `server/trpc/audit.ts`) hands them this instead of its
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
import type { Db } from "./database.ts";

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

/** `trx` as a database whose transactions join it (as savepoints with `savepoints`). */
export function joinedTransaction(
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
