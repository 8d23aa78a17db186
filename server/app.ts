import { configuredPrincipals, createPrincipalCheck } from "./domain/access/api_key.ts";
import { createSessions, keyPrincipals } from "./domain/access/sessions.ts";
import { createOidcSignIn } from "./edge/oidc.ts";
import { type Config, parseConfig } from "./base/config.ts";
import { type DatabaseHandle, type DatabaseTarget, openDatabase } from "./storage/database.ts";
import { migrateToLatest } from "./storage/migrator.ts";
import { keepStatisticsIfNeeded, type StatisticsKeeper } from "./storage/statistics.ts";
import { type Client, createHttpHandler } from "./edge/handler.ts";
import { createRequestSummary, type RequestSummary } from "./edge/access_log.ts";
import { readOpenApiJson } from "./edge/openapi_served.ts";
import { type ChannelDeps, createChannels } from "./alerting/iam_alive/channels.ts";
import { type Clock, systemClock } from "./base/clock.ts";
import {
  createReporter,
  type Reporter,
  type ReporterOptions,
} from "./alerting/iam_alive/reporter.ts";
import { errorFields, type Logger } from "./base/log.ts";
import { createStatusPages } from "./edge/status_page.ts";
import { createBadges } from "./edge/badges.ts";
import { createDashboard } from "./edge/dashboard.ts";
import { createBackupEndpoint } from "./operations/backup/endpoint.ts";
import { createNotifier, type Notifier, type NotifierDeps } from "./alerting/notify/targets.ts";
import { createNetworkPolicy } from "./base/outbound/network_policy.ts";
import { createDeliverer, type Deliverer } from "./alerting/deliverer.ts";
import { createDispatch } from "./alerting/dispatch.ts";
import { NOTIFICATIONS_CHANNEL, onOutboxWrite } from "./alerting/outbox/outbox.ts";
import { executeProbe } from "./runner/execute.ts";
import { createRunNow, type Executor, type RunNow } from "./runner/run_now.ts";
import { createRemoteRuns, type RemoteRuns, type RemoteRunsOptions } from "./runner/remote_runs.ts";
import { metricsEndpoint } from "./operations/metrics/endpoint.ts";
import {
  createServiceMetrics,
  type ServiceMetrics,
  type ServiceMetricsOptions,
} from "./operations/metrics/service.ts";
import { appRouter } from "./procedures/router.ts";
import { createPingBatcher } from "./runner/heartbeats/batcher.ts";
import {
  createHeartbeatWatch,
  type HeartbeatWatch,
  sweepDeadlines,
} from "./runner/heartbeats/watch.ts";
import { createPingEndpoint, type PingEndpoint } from "./edge/pings.ts";

export interface App {
  handler: (request: Request, client?: Client) => Promise<Response>;
  database: DatabaseHandle;
  /** Sends the I'm alive reports; not started here (main.ts starts it). */
  reporter: Reporter;
  /** Sends alert events to notification targets. */
  notifier: Notifier;
  /** Sends what the outbox holds; not started here (main.ts starts it). */
  deliverer: Deliverer;
  /** What `/metrics` serves; a runner in this process reports to `metrics.runner`. */
  metrics: ServiceMetrics;
  /** Refreshes the planner's statistics where no autovacuum does; null where one does. */
  statistics: StatisticsKeeper | null;
  /** Heartbeats' deadline watch (not started here: main.ts starts it) and their pings. */
  heartbeats: AppHeartbeats;
  /** Stops the reporter and the deliverer, then closes the database. */
  close(): Promise<void>;
}

/**
 * The settings of the configuration (`parseConfig`, `server/base/config.ts`) the app reads; the
 * composition root hands them down as they are.
 */
export type AppConfig = Pick<
  Config,
  | "readOnlyApiKeys"
  | "probeSecretHeaders"
  | "probeIntervalSeconds"
  | "probeTimeoutMs"
  | "runnerLocation"
  | "notificationLeaseMs"
  | "delivery"
  | "mail"
  | "iamAlive"
  | "rateLimitPerSecond"
  | "authFailuresPerSecond"
  | "trustedProxies"
  | "corsOrigins"
  | "maxAnswerBytes"
  | "logSummarySeconds"
  | "publicUrl"
  | "sessions"
  | "oidc"
  | "metricsPerProbe"
>;

/**
 * What a setting left out of `AppOptions.config` is: the configuration's default, but for the
 * rate limits, off (an app made in a test limits what it says it does).
 */
const DEFAULTS: AppConfig = {
  ...parseConfig({}),
  rateLimitPerSecond: 0,
  authFailuresPerSecond: 0,
};

/**
 * How the I'm alive reporter is built besides its configuration: the webhook's network policy
 * (main.ts gives the probes'), the runner's figures, and what tests replace.
 */
export type IamAliveOptions =
  & Omit<ChannelDeps, "config" | "clock">
  & Pick<ReporterOptions, "instanceId" | "pollMs" | "runnerFigures">;

/**
 * How alert events reach notification targets besides `SMTP_URL` and `MAIL_FROM` (`config.mail`):
 * the outbound network policy (none opened by default, as for the runner without
 * `PROBE_ALLOW_NETWORKS`), the links' base (`publicUrlOf`); the rest is for tests.
 */
export type NotifyOptions = Partial<Omit<NotifierDeps, "db" | "log">>;

/** What `createApp` is given: the configuration, and the parts built from it outside. */
export interface AppOptions {
  database: DatabaseTarget | DatabaseHandle;
  /** The keys in effect: `SERVICE_API_KEY`'s, or the one made at the first start. */
  apiKeys: string[];
  log: Logger;
  /** The configuration (`parseConfig`); a setting left out is at its default (`DEFAULTS`). */
  config?: Partial<AppConfig>;
  /**
   * The time of sessions, rate limits, heartbeats and I'm alive reports, and their timers: the
   * system's by default (tests drive one).
   */
  clock?: Clock;
  iamAlive?: IamAliveOptions;
  notify?: NotifyOptions;
  /**
   * How run-now (`probes.run`) runs a probe: the runner's executor for the configuration
   * (`executorFromConfig`); by default one whose network policy opens nothing.
   */
  runProbe?: Executor;
  /** The runner protocol's timings (tests): `createRemoteRuns`'s defaults otherwise. */
  remoteRuns?: Partial<Pick<RemoteRunsOptions, "pollMs" | "leaseMs" | "syncEveryMs">>;
  /** `/metrics`: process metrics and the connection layer's (main.ts), none by default. */
  metrics?: Pick<ServiceMetricsOptions, "processMetrics" | "connections">;
}

export interface AppHeartbeats {
  watch: HeartbeatWatch;
  /** Records the deadlines passed by the heartbeats' clock's now, once (tests). */
  sweep(): Promise<number>;
  /** Waits for the pings taken to be committed. */
  drain(): Promise<void>;
}

/** The heartbeats' pings (group commit), ping URLs and deadline watch over `handle`. */
function createHeartbeats(
  { handle, log, clock, localName, onMissed }: {
    handle: DatabaseHandle;
    log: Logger;
    clock: Clock;
    localName: string;
    onMissed: () => void;
  },
) {
  const batcher = createPingBatcher({
    db: handle.db,
    log,
    localName,
    // The pool has connections to spare; the embedded database has one session. (No wake-up
    // per batch: a batch that queues a notification wakes the deliverer by that write.)
    maxInFlight: handle.kind === "postgres" ? 2 : 1,
    prepare: handle.kind === "pglite",
  });
  const watch = createHeartbeatWatch({
    db: handle.db,
    log,
    clock,
    localName,
    onMissed,
  });
  const pings = createPingEndpoint({
    batcher,
    now: () => clock.now(),
  });
  const heartbeats: AppHeartbeats = {
    watch,
    sweep: () => sweepDeadlines(handle.db, { now: clock.now(), localName }),
    drain: () => batcher.drain(),
  };
  return { heartbeats, pings };
}

/** The settings of `config` that are given (a key present with `undefined` is left out). */
function given(config: Partial<AppConfig> = {}): Partial<AppConfig> {
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
}

/** Opens and migrates the database and builds the request handler and the reporter over it. */
export async function createApp(options: AppOptions): Promise<App> {
  const { database, log, iamAlive = {}, notify = {}, clock = systemClock } = options;
  const config: AppConfig = { ...DEFAULTS, ...given(options.config) };
  const handle = "db" in database ? database : await openDatabase(database);
  try {
    await migrateToLatest(handle.db);
  } catch (error) {
    await handle.close();
    throw error;
  }
  // The embedded database has no autovacuum to keep the planner's statistics (nor a server
  // with autovacuum off).
  const statistics = await keepStatisticsIfNeeded({ handle, log });
  const { instanceId, pollMs, runnerFigures, ...channelDeps } = iamAlive;
  const metrics = createServiceMetrics({
    ...options.metrics,
    perProbe: config.metricsPerProbe,
    db: handle.db,
    log,
    poolStats: handle.poolStats,
    threadMemory: handle.threadMemory,
    localLocation: config.runnerLocation,
  });
  const reporter = createReporter({
    db: handle.db,
    log,
    clock,
    instanceId,
    pollMs,
    runnerFigures,
    channels: createChannels({ ...channelDeps, config: config.iamAlive, clock }),
    // Scheduled reports go out through the outbox: its deliverer sends them without the poll.
    onQueued: () => deliverer.wake(),
    onDelivery: metrics.iamAliveDelivery,
  });
  const notifier = createNotifier({
    policy: createNetworkPolicy(),
    ...(config.mail && { mail: config.mail }),
    ...notify,
    db: handle.db,
    log,
  });
  const deliverer = createDeliverer({
    db: handle.db,
    send: createDispatch({ notifier, iamAlive: reporter }),
    log,
    leaseMs: config.notificationLeaseMs,
    ...config.delivery,
  });
  const stopWakeUps = await wakeOnOutboxWrites(handle, deliverer, log);
  const intervalMs = config.probeIntervalSeconds * 1000;
  const runNow = createRunNow({
    db: handle.db,
    intervalMs,
    location: config.runnerLocation,
    execute: options.runProbe ??
      ((target, hooks) =>
        executeProbe(target, { ...hooks, policy: createNetworkPolicy(), timeoutMs: 10_000 })),
  });
  const remoteRuns = createRemoteRuns({
    db: handle.db,
    intervalMs,
    timeoutMs: config.probeTimeoutMs,
    localName: config.runnerLocation,
    ...options.remoteRuns,
  });
  const summary = createRequestSummary({ log, windowSeconds: config.logSummarySeconds });
  const { heartbeats, pings } = createHeartbeats({
    handle,
    log,
    clock,
    localName: config.runnerLocation,
    onMissed: () => deliverer.wake(),
  });
  const handler = createEdgeHandler(config, {
    ...options,
    clock,
    handle,
    remoteRuns,
    reporter,
    notifier,
    runNow,
    metrics,
    summary,
    pings,
  });
  return {
    heartbeats,
    statistics,
    handler,
    database: handle,
    reporter,
    notifier,
    deliverer,
    metrics,
    close: async () => {
      await heartbeats.watch.stop();
      await heartbeats.drain();
      // The deliverer first: it may be sending a report over the reporter's channels.
      await stopWakeUps();
      await deliverer.stop();
      notifier.close?.();
      await reporter.stop();
      await statistics?.stop();
      await handle.close();
      summary.flush();
    },
  };
}

/**
 * Wakes the deliverer when a notification is written, so that it is claimed at once rather than
 * at the next poll (which stays, for what a wake-up missed and for retries): on PostgreSQL by
 * the `NOTIFY` the write's transaction sends when it commits, from this process or any other (an
 * instance, a runner process); on the embedded database, one process, by the write itself.
 * Returns the function that stops it.
 */
async function wakeOnOutboxWrites(
  handle: DatabaseHandle,
  deliverer: Deliverer,
  log: Logger,
): Promise<() => Promise<void>> {
  if (!handle.listen) {
    const stop = onOutboxWrite(() => deliverer.wake());
    return () => Promise.resolve(stop());
  }
  try {
    return await handle.listen(NOTIFICATIONS_CHANNEL, () => deliverer.wake());
  } catch (error) {
    log.warn("listening for notifications failed: the deliverer polls", errorFields(error));
    return () => Promise.resolve();
  }
}

/** The HTTP edge over the app's parts (`server/edge/handler.ts`, mounted by `router.ts`). */
function createEdgeHandler(
  config: AppConfig,
  {
    apiKeys,
    log,
    clock,
    handle,
    reporter,
    notifier,
    runNow,
    remoteRuns,
    metrics,
    summary,
    pings,
  }: AppOptions & {
    clock: Clock;
    pings: PingEndpoint;
    remoteRuns: RemoteRuns;
    handle: DatabaseHandle;
    reporter: Reporter;
    notifier: Notifier;
    runNow: RunNow;
    metrics: ServiceMetrics;
    summary: RequestSummary;
  },
): (request: Request, client?: Client) => Promise<Response> {
  const { readOnlyApiKeys, publicUrl } = config;
  const now = () => clock.now();
  const sessions = createSessions({
    db: handle.db,
    lifetimes: config.sessions,
    keyPrincipal: keyPrincipals({
      db: handle.db,
      configured: configuredPrincipals(apiKeys, readOnlyApiKeys),
      now,
    }),
    now,
  });
  const site = { publicUrl };
  return createHttpHandler({
    router: appRouter,
    openApiJson: readOpenApiJson(),
    db: handle.db,
    checkKey: createPrincipalCheck(apiKeys, readOnlyApiKeys),
    log,
    services: {
      iamAlive: reporter,
      notifier,
      runNow,
      remoteRuns,
      secretHeaders: config.probeSecretHeaders,
      probeDefaults: {
        intervalSeconds: config.probeIntervalSeconds,
        timeoutMs: config.probeTimeoutMs,
        localLocation: config.runnerLocation,
      },
      databaseKind: handle.kind,
      publicUrl,
      heartbeatNow: now,
      sessions,
      configuredKeys: configuredPrincipals(apiKeys, readOnlyApiKeys).map((c) => c.principal),
    },
    // The answers' bound, the rate limits, the trusted proxies and CORS, read by the edge itself.
    config,
    now,
    metrics: metrics.http,
    summary,
    // Served without a key, in this order (the first that claims a path answers it): each part adds
    // its one line here.
    pages: [
      createStatusPages({ db: handle.db }),
      createBadges({ db: handle.db, defaultIntervalSeconds: config.probeIntervalSeconds }),
      createDashboard(),
    ],
    pings,
    auth: {
      sessions,
      site,
      oidc: config.oidc &&
        createOidcSignIn(config.oidc, site, { log: (m, fields) => log.warn(m, fields) }),
    },
    // Endpoints of their own that need a key: each part adds its one line here.
    keyed: [
      metricsEndpoint(metrics.registry),
      createBackupEndpoint({ db: handle.db, kind: handle.kind, log }),
    ],
  });
}
