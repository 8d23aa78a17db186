import { PGlite } from "@electric-sql/pglite";
import { Kysely, PGliteDialect } from "kysely";
import postgres from "postgres";
import { postgresJsDialect } from "./postgres_dialect.ts";
import type { Database } from "./schema.ts";

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
  }
  | { kind: "pglite"; dataDir?: string; loadDataDir?: Blob };

export interface DatabaseHandle {
  db: Db;
  kind: DatabaseTarget["kind"];
  /** The embedded instance, when there is one (tests clone it). */
  pglite?: PGlite;
  close(): Promise<void>;
}

/** Opens the database named by the target; the same queries and migrations serve both kinds. */
export async function openDatabase(target: DatabaseTarget): Promise<DatabaseHandle> {
  if (target.kind === "postgres") {
    const statementTimeout = target.statementTimeoutMs ?? 0;
    const connectTimeout = target.connectTimeoutMs ?? 1500;
    const sql = postgres(target.url, {
      max: target.poolSize ?? 10,
      // A database that is down or unreachable answers 503 fast instead of holding the request.
      connect_timeout: connectTimeout / 1000,
      // postgres.js waits up to 20 s (3^failures / 100) before reconnecting after failures,
      // and requests queue behind that wait: capped at 250 ms, an outage still answers fast
      // and the service reconnects at once when the database is back.
      backoff: (failures: number) => Math.min(0.01 * 2 ** failures, 0.25),
      ...(statementTimeout > 0 &&
        { connection: { statement_timeout: statementTimeout } }),
      onnotice: () => {},
    });
    const db = new Kysely<Database>({
      dialect: postgresJsDialect(sql, { acquireTimeoutMs: connectTimeout }),
    });
    return { db, kind: "postgres", close: () => db.destroy() };
  }
  const pglite = await PGlite.create({
    dataDir: target.dataDir,
    loadDataDir: target.loadDataDir,
  });
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return {
    db,
    kind: "pglite",
    pglite,
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}
