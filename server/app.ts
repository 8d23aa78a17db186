import { createKeyCheck } from "./api_key.ts";
import type { Config } from "./config.ts";
import { createCors } from "./cors.ts";
import { type DatabaseHandle, type DatabaseTarget, openDatabase } from "./db/database.ts";
import { migrateToLatest } from "./db/migrator.ts";
import { createHttpHandler } from "./http.ts";
import type { Logger } from "./log.ts";
import { createRateLimiter } from "./rate_limit.ts";

export interface App {
  handler: (request: Request) => Promise<Response>;
  database: DatabaseHandle;
  close(): Promise<void>;
}

/** Opens and migrates the database and builds the request handler over it. */
export async function createApp(
  { database, apiKeys, log, rateLimitPerSecond = 0, corsOrigins = [], now }: {
    database: DatabaseTarget | DatabaseHandle;
    apiKeys: string[];
    log: Logger;
    /** Requests per second per key; 0 (the default here) for no limit. */
    rateLimitPerSecond?: number;
    corsOrigins?: string[];
    /** The rate limiter's clock, in milliseconds. */
    now?: () => number;
  },
): Promise<App> {
  const handle = "db" in database ? database : await openDatabase(database);
  try {
    await migrateToLatest(handle.db);
  } catch (error) {
    await handle.close();
    throw error;
  }
  const handler = createHttpHandler({
    db: handle.db,
    checkKey: createKeyCheck(apiKeys),
    log,
    rateLimiter: createRateLimiter({ perSecond: rateLimitPerSecond, now }),
    cors: createCors(corsOrigins),
  });
  return { handler, database: handle, close: () => handle.close() };
}

/** The database a configuration names: PostgreSQL when a URL is given, else PGlite on disk. */
export function databaseTarget(
  config: Pick<
    Config,
    | "databaseUrl"
    | "dataDir"
    | "databasePoolSize"
    | "databaseConnectTimeoutMs"
    | "databaseStatementTimeoutMs"
  >,
): DatabaseTarget {
  return config.databaseUrl
    ? {
      kind: "postgres",
      url: config.databaseUrl,
      poolSize: config.databasePoolSize,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
    }
    : { kind: "pglite", dataDir: `${config.dataDir}/pgdata` };
}
