import { createKeyCheck } from "./api_key.ts";
import { type DatabaseHandle, type DatabaseTarget, openDatabase } from "./db/database.ts";
import { migrateToLatest } from "./db/migrator.ts";
import { createHttpHandler } from "./http.ts";
import type { Logger } from "./log.ts";

export interface App {
  handler: (request: Request) => Promise<Response>;
  database: DatabaseHandle;
  close(): Promise<void>;
}

/** Opens and migrates the database and builds the request handler over it. */
export async function createApp(
  { database, apiKeys, log }: {
    database: DatabaseTarget | DatabaseHandle;
    apiKeys: string[];
    log: Logger;
  },
): Promise<App> {
  const handle = "db" in database ? database : await openDatabase(database);
  try {
    await migrateToLatest(handle.db);
  } catch (error) {
    await handle.close();
    throw error;
  }
  const handler = createHttpHandler({ db: handle.db, checkKey: createKeyCheck(apiKeys), log });
  return { handler, database: handle, close: () => handle.close() };
}

/** The database a configuration names: PostgreSQL when a URL is given, else PGlite on disk. */
export function databaseTarget(
  { databaseUrl, dataDir }: { databaseUrl?: string; dataDir: string },
): DatabaseTarget {
  return databaseUrl
    ? { kind: "postgres", url: databaseUrl }
    : { kind: "pglite", dataDir: `${dataDir}/pgdata` };
}
