/**
 * `deno task runner:remote`: a remote location's runner (docs/locations.md). It needs only
 * outbound HTTP(S) to the service: SERVICE_URL and the location's LOCATION_TOKEN; no database.
 * SIGINT and SIGTERM stop its claims, let the runs in flight end and post what waits (10 s at
 * most), then it exits.
 */
import { ConfigError, parseRemoteRunnerConfig } from "../../base/config.ts";
import { createLogger } from "../../base/log.ts";
import { createWorkerExecutor, type WorkerExecutor } from "../worker_executor.ts";
import { probeUserAgent } from "../user_agent.ts";
import { SERVICE_VERSION } from "../../base/version.ts";
import { createServiceClient } from "./client.ts";
import { createRemoteRunner } from "./runner.ts";
import { hostname } from "node:os";

export const HELP = `deno task runner:remote: run probes for a remote location of the probe service

It claims the location's due runs over the service's API, runs them here (with this
machine's network and PROBE_ALLOW_NETWORKS), and posts their results. It needs outbound
HTTP(S) to the service and nothing else: no database, no port of its own.

Settings (environment variables):
  SERVICE_URL            The service's URL, such as https://probes.example.com   (required)
  LOCATION_TOKEN         The location's token (plt_…), from POST /api/v1/locations or
                         deno task cli locations add / rotate                     (required)
  PROBE_ALLOW_NETWORKS   CIDRs probes may reach despite the network policy (loopback,
                         private ranges…), comma-separated; none by default
  PROBE_CONCURRENCY      Runs in flight at once (default 200, at most 10000)
  PROBE_TIMEOUT_MS       A run's timeout when the service names none (default 10000)
  RUNNER_ID              This runner's name among the location's runners
                         (default <host>:<pid>:<random>)
  RESULT_BUFFER_MAX      Results kept while the service cannot be reached (default 100000)
  RESULT_BUFFER_MINUTES  ... and for how long at most (default 10)
  LOG_LEVEL              debug, info (default), warn, error or silent

Start as many runners of one location as it needs, with the same token: they share its
runs, each due run going to one of them. See docs/locations.md.

Options:
  -h, --help             Show this help and exit
`;

/** Runs the remote runner until SIGINT or SIGTERM; returns the exit code. */
export async function remoteRunnerProcess(
  env: Record<string, string | undefined>,
  args: readonly string[] = [],
): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(HELP);
    return 0;
  }
  if (args.length > 0) {
    console.error(`unknown argument: ${args[0]} (see --help)`);
    return 2;
  }
  let config;
  try {
    config = parseRemoteRunnerConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`${error.message} (see --help)`);
      return 1;
    }
    throw error;
  }
  const log = createLogger(config.logLevel);
  const client = createServiceClient({ serviceUrl: config.serviceUrl, token: config.token });
  const runnerId = config.runnerId ??
    `${hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`.slice(0, 64);
  // The worker starts with the first run: the claims name the location its User-Agent gives.
  const made: { worker: WorkerExecutor | null } = { worker: null };
  const runner = createRemoteRunner({
    client,
    execute: (target, location) => {
      made.worker ??= createWorkerExecutor({
        allowNetworks: config.probeAllowNetworks,
        timeoutMs: config.probeTimeoutMs,
        userAgent: probeUserAgent(location),
        ca: config.probeCa,
      });
      return made.worker.execute(target);
    },
    log,
    runner: runnerId,
    version: SERVICE_VERSION,
    serviceUrl: config.serviceUrl,
    concurrency: config.concurrency,
    bufferMax: config.bufferMax,
    bufferMaxAgeMs: config.bufferMaxAgeMs,
  });
  const stopped = Promise.withResolvers<void>();
  const stop = () => stopped.resolve();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  runner.start();
  log.info("remote runner started", {
    service: config.serviceUrl,
    runner: runnerId,
    concurrency: config.concurrency,
    buffer_max: config.bufferMax,
    buffer_minutes: config.bufferMaxAgeMs / 60_000,
  });
  await stopped.promise;
  log.info("stopping: runs in flight end, waiting results are posted");
  await runner.stop();
  made.worker?.close();
  Deno.removeSignalListener("SIGINT", stop);
  Deno.removeSignalListener("SIGTERM", stop);
  log.info("stopped", { ...runner.counters() });
  return 0;
}

if (import.meta.main) {
  Deno.exit(await remoteRunnerProcess(Deno.env.toObject(), Deno.args));
}
