/**
 * A transaction that code written to open its own can run in: the domain's verbs each open a
 * transaction (`db.transaction().execute(...)`), and a caller that must commit their work with
 * its own (the audit log's entry, `server/trpc/audit.ts`) hands them this instead of its
 * transaction. Kysely refuses `transaction()` on a transaction; here it is a savepoint of the
 * outer one, so a verb that catches a failure of its own transaction (a unique violation turned
 * into 409, a retried create) finds the outer transaction usable, as it found the database.
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
function joinedDriver(trx: Transaction<Database>): Driver {
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
      await sql`savepoint ${savepoint()}`.execute(trx);
    },
    commitTransaction: async () => {
      await sql`release savepoint ${savepoint()}`.execute(trx);
      depth--;
    },
    rollbackTransaction: async () => {
      await sql`rollback to savepoint ${savepoint()}`.execute(trx);
      depth--;
    },
    releaseConnection: async () => {},
    destroy: async () => {},
  };
}

/** `trx` as a database whose transactions are savepoints of it. */
export function joinedTransaction(trx: Transaction<Database>): Db {
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => joinedDriver(trx),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}
