import { configuredPrincipals, createPrincipalCheck } from "./access/api_key.ts";
import {
  createSessions,
  DEFAULT_SESSION_LIFETIMES,
  keyPrincipals,
  type SessionLifetimes,
} from "./access/sessions.ts";
import { createOidcSignIn } from "./edge/oidc.ts";
import type { IamAliveConfig, OidcConfig } from "./base/config.ts";
import { createCors } from "./edge/cors.ts";
import { type DatabaseHandle, type DatabaseTarget, openDatabase } from "./storage/database.ts";
import { migrateToLatest } from "./storage/migrator.ts";
import { keepStatisticsIfNeeded, type StatisticsKeeper } from "./storage/statistics.ts";
import { type Client, createHttpHandler, REST_PREFIX } from "./edge/handler.ts";
import { createRequestSummary, type RequestSummary } from "./edge/access_log.ts";
import { buildOpenApiDocument } from "./edge/openapi.ts";
import { type ChannelDeps, createChannels } from "./alerting/iam_alive/channels.ts";
import { type Clock, systemClock } from "./base/clock.ts";
import {
  createReporter,
  type Reporter,
  type ReporterOptions,
} from "./alerting/iam_alive/reporter.ts";
import { errorFields, type Logger } from "./base/log.ts";
import { createClientAddress, parseTrustedProxies } from "./base/client_address.ts";
import { createRateLimiter } from "./edge/rate_limit.ts";
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
import { PROBE_INTERVAL_SECONDS, PROBE_TIMEOUT_MS } from "@probe/shared";
import type { ProbeDefaults } from "./domain/probes.ts";
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

/** Client addresses whose failed key checks are counted at once (the least recent is dropped). */
const MAX_TRACKED_ADDRESSES = 10_000;

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

/** How the I'm alive reporter is built; everything but the configuration is for tests and wiring. */
export interface IamAliveOptions
  extends
    Omit<ChannelDeps, "config" | "clock">,
    Pick<ReporterOptions, "instanceId" | "pollMs" | "runnerFigures"> {
  config?: IamAliveConfig;
  clock?: Clock;
}

/**
 * How alert events reach notification targets: the outbound network policy (none opened by
 * default, as for the runner without `PROBE_ALLOW_NETWORKS`), `SMTP_URL` and `MAIL_FROM` for mail
 * targets; the rest is for tests.
 */
export type NotifyOptions = Partial<Omit<NotifierDeps, "db" | "log">>;

/** What `createApp` is given. */
export interface AppOptions {
  database: DatabaseTarget | DatabaseHandle;
  apiKeys: string[];
  /** Keys that may only read (`SERVICE_API_KEYS_READONLY`); none by default. */
  readOnlyApiKeys?: string[];
  /** Probe header names masked for read-only keys besides the built-in ones (lower case). */
  secretHeaders?: string[];
  /** `PROBE_INTERVAL_SECONDS` and `PROBE_TIMEOUT_MS`: what probes without their own run at. */
  probeDefaults?: ProbeDefaults;
  log: Logger;
  iamAlive?: IamAliveOptions;
  notify?: NotifyOptions;
  /**
   * How long the deliverer's claim on a notification holds (`NOTIFICATION_LEASE_MS`); the
   * outbox's 60 s by default.
   */
  notificationLeaseMs?: number;
  /**
   * The deliverer's slots, a target's share of them and its breaker (`NOTIFY_CONCURRENCY`,
   * `NOTIFY_TARGET_CONCURRENCY`, `NOTIFY_BREAKER_FAILURES`); the deliverer's defaults otherwise.
   */
  delivery?: { concurrency?: number; perTarget?: number; breakerFailures?: number };
  /**
   * How run-now (`probes.run`) runs a probe: the runner's executor for the configuration
   * (`executorFromConfig`); by default one whose network policy opens nothing.
   */
  runProbe?: Executor;
  /** The runner protocol's timings (tests): `createRemoteRuns`'s defaults otherwise. */
  remoteRuns?: Partial<Pick<RemoteRunsOptions, "pollMs" | "leaseMs" | "now" | "syncEveryMs">>;
  /** How long a location token's lookup is kept (ms): 2 s unless given. */
  locationTokenTtlMs?: number;
  /** Requests per second per key; 0 (the default here) for no limit. */
  rateLimitPerSecond?: number;
  /** Failed key checks per second per client address; 0 (the default here) for no limit. */
  authFailuresPerSecond?: number;
  /** Proxies whose X-Forwarded-For names the client (addresses or CIDRs). */
  trustedProxies?: string[];
  corsOrigins?: string[];
  /** The rate limiter's clock, in milliseconds. */
  now?: () => number;
  /** Told of each `/trpc` call the fast path answers (for tests). */
  onFastPath?: (procedure: string) => void;
  /** Whether `/trpc`'s fast path answers plain calls (true by default; `HttpDeps`). */
  trpcFastPath?: boolean;
  /** `/metrics`: per-probe series (on by default), process metrics, the connection layer. */
  metrics?: Omit<ServiceMetricsOptions, "db" | "log" | "poolStats" | "threadMemory">;
  /** The most characters of JSON an answer or a tRPC batch may build (`MAX_ANSWER_BYTES`). */
  maxAnswerBytes?: number;
  /** The window of the log's summary of requests outside the keyed API (`LOG_SUMMARY_SECONDS`). */
  logSummarySeconds?: number;
  /** `PUBLIC_URL`: ping URLs start with it; with the request's origin when absent. */
  publicUrl?: string;
  /** The heartbeats' clock and watch (`server/runner/heartbeats/`); the system's clock by default. */
  heartbeats?: HeartbeatOptions;
  /**
   * Dashboard sessions' lifetimes (`DEFAULT_SESSION_LIFETIMES` unless given) and their clock
   * (tests drive it).
   */
  sessions?: Partial<SessionLifetimes> & { now?: () => number };
  /** Single sign-on (`OIDC_*`); none when absent. */
  oidc?: OidcConfig;
}

/** How heartbeats run: their clock (tests drive it), the watch's pace, the pings' limits. */
export interface HeartbeatOptions {
  clock?: Clock;
  /** How often the deadline watch looks (ms): 250 by default. */
  watchEveryMs?: number;
  /** Pings a second one token may make: 200 by default; 0 for no limit. */
  pingsPerTokenPerSecond?: number;
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
  { handle, log, options, localName, onMissed }: {
    handle: DatabaseHandle;
    log: Logger;
    options: HeartbeatOptions;
    localName?: string;
    onMissed: () => void;
  },
) {
  const clock = options.clock ?? systemClock;
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
    everyMs: options.watchEveryMs,
    localName,
    onMissed,
  });
  const pings = createPingEndpoint({
    batcher,
    now: () => clock.now(),
    perTokenPerSecond: options.pingsPerTokenPerSecond,
  });
  const heartbeats: AppHeartbeats = {
    watch,
    sweep: () => sweepDeadlines(handle.db, { now: clock.now(), localName }),
    drain: () => batcher.drain(),
  };
  return { heartbeats, pings };
}

/** Opens and migrates the database and builds the request handler and the reporter over it. */
export async function createApp(options: AppOptions): Promise<App> {
  const { database, log, iamAlive = {}, notify = {}, notificationLeaseMs, delivery = {} } = options;
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
  const { config = {}, clock = systemClock, instanceId, pollMs, runnerFigures, ...channelDeps } =
    iamAlive;
  const metrics = createServiceMetrics({
    ...options.metrics,
    db: handle.db,
    log,
    poolStats: handle.poolStats,
    threadMemory: handle.threadMemory,
    localLocation: options.probeDefaults?.localLocation,
  });
  const reporter = createReporter({
    db: handle.db,
    log,
    clock,
    instanceId,
    pollMs,
    runnerFigures,
    channels: createChannels({ ...channelDeps, config, clock }),
    // Scheduled reports go out through the outbox: its deliverer sends them without the poll.
    onQueued: () => deliverer.wake(),
    onDelivery: metrics.iamAliveDelivery,
  });
  const notifier = createNotifier({ policy: createNetworkPolicy(), ...notify, db: handle.db, log });
  const deliverer = createDeliverer({
    db: handle.db,
    send: createDispatch({ notifier, iamAlive: reporter }),
    log,
    leaseMs: notificationLeaseMs,
    ...delivery,
  });
  const stopWakeUps = await wakeOnOutboxWrites(handle, deliverer, log);
  const runNow = createRunNow({
    db: handle.db,
    intervalMs: (options.probeDefaults?.intervalSeconds ?? PROBE_INTERVAL_SECONDS.default) * 1000,
    ...(options.probeDefaults?.localLocation && {
      location: options.probeDefaults.localLocation,
    }),
    execute: options.runProbe ??
      ((target, hooks) =>
        executeProbe(target, { ...hooks, policy: createNetworkPolicy(), timeoutMs: 10_000 })),
  });
  const remoteRuns = createRemoteRuns({
    db: handle.db,
    intervalMs: (options.probeDefaults?.intervalSeconds ?? PROBE_INTERVAL_SECONDS.default) * 1000,
    timeoutMs: options.probeDefaults?.timeoutMs ?? PROBE_TIMEOUT_MS.default,
    ...(options.probeDefaults?.localLocation && {
      localName: options.probeDefaults.localLocation,
    }),
    ...options.remoteRuns,
  });
  const summary = createRequestSummary({ log, windowSeconds: options.logSummarySeconds });
  const { heartbeats, pings } = createHeartbeats({
    handle,
    log,
    options: options.heartbeats ?? {},
    localName: options.probeDefaults?.localLocation,
    onMissed: () => deliverer.wake(),
  });
  const handler = createEdgeHandler(options, {
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
  {
    apiKeys,
    readOnlyApiKeys = [],
    secretHeaders = [],
    probeDefaults,
    log,
    rateLimitPerSecond = 0,
    authFailuresPerSecond = 0,
    trustedProxies = [],
    corsOrigins = [],
    now,
    onFastPath,
    trpcFastPath,
    maxAnswerBytes,
    locationTokenTtlMs,
    publicUrl,
    heartbeats,
    sessions: sessionOptions = {},
    oidc,
  }: AppOptions,
  { handle, reporter, notifier, runNow, remoteRuns, metrics, summary, pings }: {
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
  const { now: sessionClock, ...lifetimes } = sessionOptions;
  const sessions = createSessions({
    db: handle.db,
    lifetimes: { ...DEFAULT_SESSION_LIFETIMES, ...lifetimes },
    keyPrincipal: keyPrincipals({
      db: handle.db,
      configured: configuredPrincipals(apiKeys, readOnlyApiKeys),
      now: sessionClock,
    }),
    now: sessionClock,
  });
  const site = { publicUrl };
  return createHttpHandler({
    router: appRouter,
    document: buildOpenApiDocument(appRouter, REST_PREFIX),
    db: handle.db,
    checkKey: createPrincipalCheck(apiKeys, readOnlyApiKeys),
    log,
    services: {
      iamAlive: reporter,
      notifier,
      runNow,
      remoteRuns,
      secretHeaders,
      probeDefaults,
      databaseKind: handle.kind,
      publicUrl,
      heartbeatNow: heartbeats?.clock && (() => heartbeats.clock!.now()),
      sessions,
      configuredKeys: configuredPrincipals(apiKeys, readOnlyApiKeys).map((c) => c.principal),
    },
    locationTokenTtlMs,
    rateLimiter: createRateLimiter({ perSecond: rateLimitPerSecond, now }),
    authFailureLimiter: createRateLimiter({
      perSecond: authFailuresPerSecond,
      now,
      maxKeys: MAX_TRACKED_ADDRESSES,
    }),
    clientAddress: createClientAddress(parseTrustedProxies(trustedProxies.join(","))),
    cors: createCors(corsOrigins),
    onFastPath,
    trpcFastPath,
    metrics: metrics.http,
    maxAnswerBytes,
    summary,
    // Served without a key, in this order (the first that claims a path answers it): each part adds
    // its one line here.
    pages: [
      createStatusPages({ db: handle.db }),
      createBadges({ db: handle.db, defaultIntervalSeconds: probeDefaults?.intervalSeconds }),
      createDashboard(),
    ],
    pings,
    auth: {
      sessions,
      site,
      oidc: oidc && createOidcSignIn(oidc, site, { log: (m, fields) => log.warn(m, fields) }),
    },
    // Endpoints of their own that need a key: each part adds its one line here.
    keyed: [
      metricsEndpoint(metrics.registry),
      createBackupEndpoint({ db: handle.db, kind: handle.kind, log }),
    ],
  });
}
