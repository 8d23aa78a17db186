/**
 * `deno task runner`: a probe runner with no HTTP API, for scaling runners apart from the API.
 * It needs PostgreSQL (DATABASE_URL): runners share the schedule there. SIGINT and SIGTERM give
 * back unstarted claims, let runs in flight finish and record them, then close the database.
 */
import { ConfigError, parseConfig } from "../config.ts";
import { openDatabase } from "../db/database.ts";
import { migrateToLatest } from "../db/migrator.ts";
import { createLogger, errorFields } from "../log.ts";
import { runnerFromConfig } from "./configure.ts";
import type { RunnerOptions } from "./runner.ts";

/**
 * Runs a runner process until SIGINT or SIGTERM; returns the exit code. `overrides` is for the
 * tests' runner processes, which use intervals shorter than configuration allows.
 */
export async function runnerProcess(
  env: Record<string, string | undefined>,
  overrides: Partial<RunnerOptions> = {},
): Promise<number> {
  let config;
  try {
    config = parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
  if (!config.databaseUrl) {
    console.error(
      "DATABASE_URL must name a PostgreSQL database: the embedded database has one runner, " +
        "inside the server",
    );
    return 1;
  }
  const log = createLogger(config.logLevel);
  const handle = await openDatabase({ kind: "postgres", url: config.databaseUrl, poolSize: 4 });
  try {
    await migrateToLatest(handle.db);
    const runner = runnerFromConfig({ config, db: handle.db, log, overrides });
    const stopped = Promise.withResolvers<void>();
    const stop = () => stopped.resolve();
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
    runner.start();
    await stopped.promise;
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
    await runner.stop();
  } finally {
    await handle.close();
  }
  return 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await runnerProcess(Deno.env.toObject()));
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", msg: "runner failed", ...errorFields(error) }),
    );
    Deno.exit(1);
  }
}
