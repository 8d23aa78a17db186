/**
 * Composition root: configuration, then the database and its migrations, then the I'm alive
 * reporter and the probe runner (unless RUNNER=off), then the HTTP server. SIGINT and SIGTERM stop
 * new connections and the runner's claims, let requests and probe runs in flight finish, stop the
 * reporter, close the database.
 */
import { resolveApiKeys } from "./http/api_key.ts";
import { createApp, databaseTarget } from "./app.ts";
import { ConfigError, parseConfig } from "./config.ts";
import { openDatabase } from "./db/database.ts";
import { createLogger, errorFields } from "./log.ts";
import { runnerFromConfig } from "./runner/configure.ts";
import { createNetworkPolicy } from "./outbound/network_policy.ts";
import { outboundCheck, reportRunnerFigures } from "./iam_alive/runner_figures.ts";

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
  const database = await openDatabase(target);
  const app = await createApp({
    database,
    apiKeys,
    log,
    iamAlive: {
      config: config.iamAlive,
      runnerFigures: reportRunnerFigures(database.db),
      // The webhook obeys the probes' outbound network policy. Its URL is checked before each
      // delivery; the connection itself is made by fetch (the URL comes from the operator).
      checkOutboundUrl: outboundCheck(createNetworkPolicy(config.probeAllowNetworks)),
    },
    rateLimitPerSecond: config.rateLimitPerSecond,
    authFailuresPerSecond: config.authFailuresPerSecond,
    trustedProxies: config.trustedProxies,
    corsOrigins: config.corsOrigins,
  });
  await app.reporter.start();
  const runner = config.runner ? runnerFromConfig({ config, db: database.db, log }) : null;
  runner?.start();

  const shutdown = new AbortController();
  // Listen for signals before announcing the port: a SIGTERM right after "listening" must
  // still shut down in order.
  let runnerStopped: Promise<void> | undefined;
  const stop = () => {
    shutdown.abort();
    runnerStopped ??= runner?.stop();
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  const server = Deno.serve({
    hostname: config.host,
    port: config.port,
    signal: shutdown.signal,
    onListen: ({ hostname, port }) =>
      log.info("listening", { url: `http://${hostname}:${port}`, database: target.kind }),
  }, (request, info) => app.handler(request, { address: info.remoteAddr.hostname }));

  await server.finished;
  Deno.removeSignalListener("SIGINT", stop);
  Deno.removeSignalListener("SIGTERM", stop);
  await (runnerStopped ?? runner?.stop());
  await app.close(); // the reporter stops before the database closes
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
