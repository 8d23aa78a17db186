import { PGlite } from "@electric-sql/pglite";
import { Kysely, PGliteDialect } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";
import type { Database } from "./schema.ts";

export type Db = Kysely<Database>;

/** Where the data lives: a PostgreSQL server, or an embedded PGlite. */
export type DatabaseTarget =
  | { kind: "postgres"; url: string; poolSize?: number }
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
    const sql = postgres(target.url, {
      max: target.poolSize ?? 10,
      connect_timeout: 2,
      onnotice: () => {},
    });
    const db = new Kysely<Database>({ dialect: new PostgresJSDialect({ postgres: sql }) });
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
