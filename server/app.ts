import { createKeyCheck } from "./api_key.ts";
import type { IamAliveConfig } from "./config.ts";
import { type DatabaseHandle, type DatabaseTarget, openDatabase } from "./db/database.ts";
import { migrateToLatest } from "./db/migrator.ts";
import { createHttpHandler } from "./http.ts";
import { type ChannelDeps, createChannels } from "./iam_alive/channels.ts";
import { type Clock, systemClock } from "./iam_alive/clock.ts";
import { createReporter, type Reporter, type ReporterOptions } from "./iam_alive/reporter.ts";
import type { Logger } from "./log.ts";

export interface App {
  handler: (request: Request) => Promise<Response>;
  database: DatabaseHandle;
  /** Sends the I'm alive reports; not started here (main.ts starts it). */
  reporter: Reporter;
  /** Stops the reporter, then closes the database. */
  close(): Promise<void>;
}

/** How the I'm alive reporter is built; everything but the configuration is for tests and wiring. */
export interface IamAliveOptions
  extends
    Omit<ChannelDeps, "config" | "clock">,
    Pick<ReporterOptions, "instanceId" | "pollMs" | "runnerFigures"> {
  config?: IamAliveConfig;
  clock?: Clock;
}

/** Opens and migrates the database and builds the request handler and the reporter over it. */
export async function createApp(
  { database, apiKeys, log, iamAlive = {} }: {
    database: DatabaseTarget | DatabaseHandle;
    apiKeys: string[];
    log: Logger;
    iamAlive?: IamAliveOptions;
  },
): Promise<App> {
  const handle = "db" in database ? database : await openDatabase(database);
  try {
    await migrateToLatest(handle.db);
  } catch (error) {
    await handle.close();
    throw error;
  }
  const { config = {}, clock = systemClock, instanceId, pollMs, runnerFigures, ...channelDeps } =
    iamAlive;
  const reporter = createReporter({
    db: handle.db,
    log,
    clock,
    instanceId,
    pollMs,
    runnerFigures,
    channels: createChannels({ ...channelDeps, config, clock }),
  });
  const handler = createHttpHandler({
    db: handle.db,
    checkKey: createKeyCheck(apiKeys),
    log,
    iamAlive: reporter,
  });
  return {
    handler,
    database: handle,
    reporter,
    close: async () => {
      await reporter.stop();
      await handle.close();
    },
  };
}

/** The database a configuration names: PostgreSQL when a URL is given, else PGlite on disk. */
export function databaseTarget(
  { databaseUrl, dataDir }: { databaseUrl?: string; dataDir: string },
): DatabaseTarget {
  return databaseUrl
    ? { kind: "postgres", url: databaseUrl }
    : { kind: "pglite", dataDir: `${dataDir}/pgdata` };
}
