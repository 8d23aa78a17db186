/**
 * Composition root: configuration, then the database and its migrations, then the probe runner
 * (unless RUNNER=off) and the HTTP server. SIGINT and SIGTERM stop new connections and the
 * runner's claims, let requests and probe runs in flight finish, then close the database.
 */
import { resolveApiKeys } from "./api_key.ts";
import { createApp, databaseTarget } from "./app.ts";
import { ConfigError, parseConfig } from "./config.ts";
import { createLogger, errorFields } from "./log.ts";
import { runnerFromConfig } from "./runner/configure.ts";

async function main(): Promise<number> {
  let config;
  try {
    config = parseConfig(Deno.env.toObject());
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
  const log = createLogger(config.logLevel);
  await Deno.mkdir(config.dataDir, { recursive: true });
  const apiKeys = await resolveApiKeys({
    configured: config.apiKeys,
    dataDir: config.dataDir,
    port: config.port,
    log,
  });
  const target = databaseTarget(config);
  const app = await createApp({ database: target, apiKeys, log });
  const runner = config.runner ? runnerFromConfig({ config, db: app.database.db, log }) : null;
  runner?.start();

  const shutdown = new AbortController();
  const server = Deno.serve({
    hostname: config.host,
    port: config.port,
    signal: shutdown.signal,
    onListen: ({ hostname, port }) =>
      log.info("listening", { url: `http://${hostname}:${port}`, database: target.kind }),
  }, app.handler);

  let runnerStopped: Promise<void> | undefined;
  const stop = () => {
    shutdown.abort();
    runnerStopped ??= runner?.stop();
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await server.finished;
  Deno.removeSignalListener("SIGINT", stop);
  Deno.removeSignalListener("SIGTERM", stop);
  await (runnerStopped ?? runner?.stop());
  await app.close();
  log.info("stopped");
  return 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", msg: "start-up failed", ...errorFields(error) }),
    );
    Deno.exit(1);
  }
}
