import { DEFAULT_DATA_DIR } from "@probe/shared";
import tls from "node:tls";
import { z } from "zod";
import { LOG_LEVELS } from "./log.ts";
import { parseTrustedProxies } from "./client_address.ts";
import { parseNetworks } from "./outbound/network_policy.ts";

const optional = (schema: z.ZodType) =>
  z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), schema);

/**
 * `PROBE_CA_FILE`: a PEM file of certificate authorities that `tls://` probes trust besides the
 * system's (a private CA); read once at start. Its value is the whole bundle to trust.
 */
const caFile = optional(
  z.string().transform((path, ctx) => {
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (error) {
      const message = `cannot read ${path}: ${(error as Error).message}`;
      ctx.issues.push({ code: "custom", input: path, message });
      return z.NEVER;
    }
    if (!text.includes("-----BEGIN CERTIFICATE-----")) {
      ctx.issues.push({ code: "custom", input: path, message: `${path} holds no PEM certificate` });
      return z.NEVER;
    }
    return [...tls.rootCertificates, text].join("\n");
  }).optional(),
);

/** A comma-separated list of API keys, each of 8 characters or more. */
function apiKeyList() {
  return z.string()
    .transform((v) => v.split(",").map((k) => k.trim()).filter((k) => k.length > 0))
    .refine((keys) => keys.length > 0, "must hold at least one key")
    .refine((keys) => keys.every((k) => k.length >= 8), "every key must be at least 8 characters")
    .optional();
}

/** A comma-separated list (each item trimmed, empty ones dropped); empty when unset. */
function commaList(each: (v: string) => string = (v) => v) {
  return z.string()
    .transform((v) => v.split(",").map((g) => each(g.trim())).filter((g) => g.length > 0))
    .default([]);
}

/** The longest `PUBLIC_URL`: every notification's link starts with it. */
export const MAX_PUBLIC_URL_LENGTH = 512;

const configSchema = z.object({
  PORT: optional(z.coerce.number().int().min(0).max(65535).default(8000)),
  HOST: optional(z.string().default("127.0.0.1")),
  // Where people reach the dashboard: notifications link to probes' pages under it.
  PUBLIC_URL: optional(
    z.string().max(MAX_PUBLIC_URL_LENGTH, `must be at most ${MAX_PUBLIC_URL_LENGTH} characters`)
      .refine(
        isPublicUrl,
        "must be an http:// or https:// URL without credentials, query or fragment",
      )
      .transform((v) => new URL(v).href.replace(/\/+$/, ""))
      .optional(),
  ),
  SERVICE_API_KEY: optional(apiKeyList()),
  // Keys that may read (every GET, every tRPC query) and nothing else.
  SERVICE_API_KEYS_READONLY: optional(apiKeyList()),
  // Probe header names whose values read-only keys never see, besides the built-in ones.
  PROBE_SECRET_HEADERS: optional(
    z.string()
      .transform((v) => v.split(",").map((h) => h.trim().toLowerCase()).filter((h) => h !== ""))
      .refine(
        (names) => names.every((h) => /^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(h)),
        "must be a comma-separated list of header names",
      )
      .default([]),
  ),
  DATABASE_URL: optional(
    z.string()
      .refine((v) => /^postgres(ql)?:\/\//.test(v) && URL.canParse(v), "must be a postgres:// URL")
      .optional(),
  ),
  DATABASE_POOL_SIZE: optional(z.coerce.number().int().min(1).max(1000).default(10)),
  DATABASE_CONNECT_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(60_000).default(1500)),
  DATABASE_STATEMENT_TIMEOUT_MS: optional(z.coerce.number().int().min(0).default(1500)),
  DATABASE_QUERY_DEADLINE_MS: optional(z.coerce.number().int().min(100).max(600_000).default(2000)),
  DATA_DIR: optional(z.string().default(DEFAULT_DATA_DIR)),
  // Connection hygiene (server/edge/serve.ts); MAX_CONNECTIONS unset is sized from `ulimit -n`.
  MAX_CONNECTIONS: optional(z.coerce.number().int().min(1).max(10_000_000).optional()),
  HEADERS_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(600_000).default(10_000)),
  BODY_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(600_000).default(10_000)),
  IDLE_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(600_000).default(5_000)),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS).default("info")),
  LOG_SUMMARY_SECONDS: optional(z.coerce.number().int().min(1).max(3600).default(10)),
  MAX_ANSWER_BYTES: optional(
    z.coerce.number().int().min(65_536).max(256 * 1024 * 1024).default(16 * 1024 * 1024),
  ),
  RATE_LIMIT_PER_SECOND: optional(z.coerce.number().min(0).default(1000)),
  AUTH_FAILURES_PER_SECOND: optional(z.coerce.number().min(0).default(10)),
  TRUSTED_PROXIES: optional(
    z.string()
      .superRefine((v, ctx) => {
        try {
          parseTrustedProxies(v);
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message });
        }
      })
      .transform((v) => v.split(",").map((p) => p.trim()).filter((p) => p.length > 0))
      .default([]),
  ),
  CORS_ORIGINS: optional(
    z.string()
      .transform((v) => v.split(",").map((o) => o.trim()).filter((o) => o.length > 0))
      .refine(
        (origins) => origins.every((o) => URL.canParse(o) && new URL(o).origin === o),
        "must be a comma-separated list of origins such as https://app.example.com",
      )
      .default([]),
  ),
  PROBE_INTERVAL_SECONDS: optional(z.coerce.number().int().min(10).max(86400).default(60)),
  PROBE_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(120_000).default(10_000)),
  PROBE_ALLOW_NETWORKS: optional(
    z.string().transform((v, ctx) => {
      try {
        return parseNetworks(v);
      } catch (error) {
        ctx.issues.push({ code: "custom", input: v, message: (error as Error).message });
        return z.NEVER;
      }
    }).default([]),
  ),
  PROBE_CA_FILE: caFile,
  PROBE_CONCURRENCY: optional(z.coerce.number().int().min(1).max(10_000).default(1000)),
  // Unset: a quarter of PROBE_CONCURRENCY (docs/runner.md, "Run slots").
  PROBE_HOST_CONCURRENCY: optional(z.coerce.number().int().min(1).max(10_000).optional()),
  RESULTS_RETENTION_DAYS: optional(z.coerce.number().int().min(1).max(400).default(7)),
  // Days the audit log keeps an entry (docs/access.md): a year and more by default.
  AUDIT_RETENTION_DAYS: optional(z.coerce.number().int().min(1).max(36_500).default(400)),
  RUNNER: optional(z.enum(["on", "off"]).default("on")),
  // The name of the built-in location the runners on the database form (docs/locations.md).
  RUNNER_LOCATION: optional(
    z.string().max(64).regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
      "must start with a letter or digit and hold only letters, digits, '.', '_' and '-'",
    ).default("local"),
  ),
  // /metrics (docs/metrics.md): the per-probe series, and the standalone runner's own port.
  METRICS_PER_PROBE: optional(z.enum(["true", "false"]).default("true")),
  METRICS_PORT: optional(z.coerce.number().int().min(0).max(65535).optional()),
  // How long a deliverer's claim on a notification holds (server/alerting/outbox/outbox.ts). Under the
  // time a send may take (10 s for HTTP targets), another instance can take over a notification
  // still being sent and send it twice (with the same webhook-id): short leases are for tests.
  NOTIFICATION_LEASE_MS: optional(z.coerce.number().int().min(1000).max(3_600_000).default(60_000)),
  // The deliverer's slots (server/alerting/deliverer.ts): those shared by all targets beyond each
  // one's own, one target's share, and the failures in a row that pause a target, so bad
  // receivers slow only themselves.
  NOTIFY_CONCURRENCY: optional(z.coerce.number().int().min(1).max(1000).default(64)),
  NOTIFY_TARGET_CONCURRENCY: optional(z.coerce.number().int().min(1).max(1000).default(16)),
  NOTIFY_BREAKER_FAILURES: optional(z.coerce.number().int().min(1).max(1000).default(3)),
  IAM_ALIVE_WEBHOOK_URL: optional(
    z.string().refine(isUrlOf(["http:", "https:"]), "must be an http:// or https:// URL")
      .optional(),
  ),
  IAM_ALIVE_WEBHOOK_SECRET: optional(
    z.string().min(16, "must be at least 16 characters").optional(),
  ),
  SMTP_URL: optional(
    z.string().refine(isUrlOf(["smtp:", "smtps:"]), "must be an smtp:// or smtps:// URL")
      .optional(),
  ),
  MAIL_FROM: optional(z.string().refine(isMailbox, "must be a mail address").optional()),
  MAIL_TO: optional(
    z.string()
      .transform((v) => v.split(",").map((a) => a.trim()).filter((a) => a.length > 0))
      .refine((to) => to.length > 0, "must hold at least one mail address")
      .refine((to) => to.every(isMailbox), "must be comma-separated mail addresses")
      .optional(),
  ),
  // Dashboard sessions (docs/access.md): unused for this long they end; they end at this age.
  SESSION_IDLE_MINUTES: optional(z.coerce.number().int().min(1).max(525_600).default(720)),
  SESSION_MAX_HOURS: optional(z.coerce.number().int().min(1).max(8760).default(168)),
  // Single sign-on with OpenID Connect (docs/access.md): all three or none.
  OIDC_ISSUER: optional(
    z.string().refine(isUrlOf(["http:", "https:"]), "must be an http:// or https:// URL")
      .optional(),
  ),
  OIDC_CLIENT_ID: optional(z.string().optional()),
  OIDC_CLIENT_SECRET: optional(z.string().optional()),
  OIDC_NAME: optional(z.string().max(64).optional()),
  OIDC_SCOPES: optional(z.string().default("openid email profile")),
  // A user no group maps gets this role; `none` refuses them.
  OIDC_DEFAULT_ROLE: optional(z.enum(["none", "viewer", "editor", "admin"]).default("none")),
  OIDC_ROLE_CLAIM: optional(z.string().default("groups")),
  OIDC_ADMIN_GROUPS: optional(commaList()),
  OIDC_EDITOR_GROUPS: optional(commaList()),
  OIDC_VIEWER_GROUPS: optional(commaList()),
  OIDC_ALLOWED_DOMAINS: optional(commaList((v) => v.toLowerCase())),
  OIDC_PROJECTS_CLAIM: optional(z.string().optional()),
}).superRefine((env, ctx) => {
  // The server's statement timeout answers a slow query; the deadline is for a server that
  // cannot answer at all, so it must leave the statement timeout the time to.
  const statementTimeout = env.DATABASE_STATEMENT_TIMEOUT_MS as number;
  if (statementTimeout > 0 && (env.DATABASE_QUERY_DEADLINE_MS as number) <= statementTimeout) {
    ctx.addIssue({
      code: "custom",
      path: ["DATABASE_QUERY_DEADLINE_MS"],
      message: `must be longer than DATABASE_STATEMENT_TIMEOUT_MS (${statementTimeout})`,
    });
  }
  // A key is read-only or not: one in both lists is a mistake, not a choice to guess at.
  const readOnly = new Set(env.SERVICE_API_KEYS_READONLY as string[] | undefined);
  if ((env.SERVICE_API_KEY as string[] | undefined)?.some((key) => readOnly.has(key))) {
    ctx.addIssue({
      code: "custom",
      path: ["SERVICE_API_KEYS_READONLY"],
      message: "must not hold a key that SERVICE_API_KEY also holds",
    });
  }
  // Half a channel's configuration is a mistake worth stopping for, not a silent no-op.
  const need = (name: keyof typeof env, when: keyof typeof env) => {
    if (env[when] !== undefined && env[name] === undefined) {
      ctx.addIssue({ code: "custom", path: [name], message: `is required when ${when} is set` });
    }
  };
  need("IAM_ALIVE_WEBHOOK_URL", "IAM_ALIVE_WEBHOOK_SECRET");
  // The server's mail: SMTP_URL and MAIL_FROM go together (mail targets need no more); MAIL_TO,
  // the I'm alive report's recipients, needs both.
  need("SMTP_URL", "MAIL_FROM");
  need("MAIL_FROM", "SMTP_URL");
  need("SMTP_URL", "MAIL_TO");
  need("MAIL_FROM", "MAIL_TO");
  need("OIDC_CLIENT_ID", "OIDC_ISSUER");
  need("OIDC_CLIENT_SECRET", "OIDC_ISSUER");
  need("OIDC_ISSUER", "OIDC_CLIENT_ID");
});

/** A base for links: http(s), nothing after its path, no credentials to hand out in messages. */
function isPublicUrl(v: string): boolean {
  if (!isUrlOf(["http:", "https:"])(v)) return false;
  const u = new URL(v);
  return u.username === "" && u.password === "" && !v.includes("?") && !v.includes("#");
}

/** A check that a string is an absolute URL with one of the given schemes; never echoes it. */
function isUrlOf(protocols: string[]): (v: string) => boolean {
  return (v) => URL.canParse(v) && protocols.includes(new URL(v).protocol);
}

/** A bare address (`a@b.example`) or one with a display name (`Monitor <a@b.example>`). */
function isMailbox(v: string): boolean {
  const address = /^[^<>]*<([^<>]+)>$/.exec(v.trim())?.[1] ?? v.trim();
  return z.email().safeParse(address).success;
}

/**
 * The service's address for people: `PUBLIC_URL`, or else the one it listens at (`hostname` and
 * `port` as bound; a wildcard address is reached on this machine's loopback).
 */
export function publicUrlOf(
  config: Pick<Config, "publicUrl">,
  { hostname, port }: { hostname: string; port: number },
): string {
  if (config.publicUrl) return config.publicUrl;
  const host = hostname === "0.0.0.0"
    ? "127.0.0.1"
    : hostname === "::"
    ? "[::1]"
    : hostname.includes(":")
    ? `[${hostname}]`
    : hostname;
  return `http://${host}:${port}`;
}

/** Where the I'm alive channels deliver; a channel without its settings is not configured. */
export interface IamAliveConfig {
  webhook?: { url: string; secret?: string };
  mail?: { smtpUrl: string; from: string; to: string[] };
}

export interface Config {
  port: number;
  host: string;
  /**
   * Where people reach the service (`PUBLIC_URL`, no trailing slash): the base of the links in
   * notifications. Unset: the address it listens at (`publicUrlOf`).
   */
  publicUrl?: string;
  apiKeys?: string[];
  /** Keys that may only read (`SERVICE_API_KEYS_READONLY`); none when empty. */
  readOnlyApiKeys: string[];
  /** Probe header names (lower case) masked for read-only keys besides the built-in ones. */
  probeSecretHeaders: string[];
  databaseUrl?: string;
  /** Connections postgres.js may open. */
  databasePoolSize: number;
  /** How long opening a database connection may take before the request answers 503. */
  databaseConnectTimeoutMs: number;
  /** How long one SQL statement may run before it is cancelled (503); 0 for no limit. */
  databaseStatementTimeoutMs: number;
  /** How long a request's query may wait for the database's answer before it answers 503. */
  databaseQueryDeadlineMs: number;
  dataDir: string;
  /** Connection hygiene; see server/edge/serve.ts and docs/operations.md#connections. */
  connections: {
    /** Open connections at most; unset: the file limit less the pool, the runner and 64. */
    maxConnections?: number;
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
    idleTimeoutMs: number;
  };
  logLevel: (typeof LOG_LEVELS)[number];
  /** The window of the summary line of requests outside the keyed API, in seconds. */
  logSummarySeconds: number;
  /** The most characters of JSON one answer, or one tRPC batch, may build (413 past it). */
  maxAnswerBytes: number;
  /** Requests per second per API key (a token bucket holding twice that); 0 for no limit. */
  rateLimitPerSecond: number;
  /** Failed key checks per second per client address (twice that in a burst); 0 for no limit. */
  authFailuresPerSecond: number;
  /** Proxies (addresses or CIDRs) whose X-Forwarded-For names the client. */
  trustedProxies: string[];
  /** Origins that may call from a browser; none gets CORS headers when empty. */
  corsOrigins: string[];
  /** The probe runner's settings. */
  probeIntervalSeconds: number;
  probeTimeoutMs: number;
  /** CIDRs opened to probes despite the network policy. */
  probeAllowNetworks: string[];
  /** The authorities `tls://` probes trust: `PROBE_CA_FILE`'s and the system's; unset, the system's. */
  probeCa?: string;
  probeConcurrency: number;
  /** Runs in flight at once against one target host (`PROBE_HOST_CONCURRENCY`). */
  probeHostConcurrency: number;
  resultsRetentionDays: number;
  /** Days the audit log keeps an entry (`AUDIT_RETENTION_DAYS`), pruned by the runner. */
  auditRetentionDays: number;
  /** Whether the server process runs a probe runner. */
  runner: boolean;
  /** The name of the built-in location of the runners on the database (`RUNNER_LOCATION`). */
  runnerLocation: string;
  /** Whether `/metrics` has the per-probe series (`METRICS_PER_PROBE`). */
  metricsPerProbe: boolean;
  /** Where the standalone runner serves `/metrics` (`METRICS_PORT`); nowhere when unset. */
  metricsPort?: number;
  /**
   * How long a deliverer's claim on a notification holds before another may send it (a process
   * killed mid-send is taken over after this). See docs/operations.md.
   */
  notificationLeaseMs: number;
  /**
   * The deliverer's slots: sends in flight at once beyond each target's own slot
   * (`NOTIFY_CONCURRENCY`), at most `perTarget` to one target (`NOTIFY_TARGET_CONCURRENCY`, its own
   * slot included, never more than `concurrency`), and the failures in a row after which a
   * target is paused (`NOTIFY_BREAKER_FAILURES`).
   */
  delivery: { concurrency: number; perTarget: number; breakerFailures: number };
  /** The server's SMTP settings (`SMTP_URL`, `MAIL_FROM`), for mail notification targets. */
  mail?: { smtpUrl: string; from: string };
  iamAlive: IamAliveConfig;
  /** Dashboard sessions' lifetimes (`SESSION_IDLE_MINUTES`, `SESSION_MAX_HOURS`), in ms. */
  sessions: { idleMs: number; absoluteMs: number };
  /** Single sign-on (`OIDC_*`); absent when `OIDC_ISSUER` is unset. */
  oidc?: OidcConfig;
}

/** Single sign-on with an OpenID provider, and how its users' claims map to roles and projects. */
export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the sign-in button names: `OIDC_NAME`, or the issuer's host. */
  name: string;
  scopes: string;
  /** The role of a user no group maps; null refuses them. */
  defaultRole: "viewer" | "editor" | "admin" | null;
  roleClaim: string;
  adminGroups: string[];
  editorGroups: string[];
  viewerGroups: string[];
  /** Email domains (lower case) allowed to sign in; any when empty. */
  allowedDomains: string[];
  /** The claim listing a user's projects; every project when unset. */
  projectsClaim?: string;
}

/** A configuration value that is not usable; the message names the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Reads the configuration once, from the environment given; throws ConfigError on a bad value. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  }
  const c = parsed.data as {
    PORT: number;
    HOST: string;
    PUBLIC_URL?: string;
    SERVICE_API_KEY?: string[];
    SERVICE_API_KEYS_READONLY?: string[];
    PROBE_SECRET_HEADERS: string[];
    DATABASE_URL?: string;
    DATABASE_POOL_SIZE: number;
    DATABASE_CONNECT_TIMEOUT_MS: number;
    DATABASE_STATEMENT_TIMEOUT_MS: number;
    DATABASE_QUERY_DEADLINE_MS: number;
    DATA_DIR: string;
    MAX_CONNECTIONS?: number;
    HEADERS_TIMEOUT_MS: number;
    BODY_TIMEOUT_MS: number;
    IDLE_TIMEOUT_MS: number;
    LOG_LEVEL: Config["logLevel"];
    LOG_SUMMARY_SECONDS: number;
    MAX_ANSWER_BYTES: number;
    RATE_LIMIT_PER_SECOND: number;
    AUTH_FAILURES_PER_SECOND: number;
    TRUSTED_PROXIES: string[];
    CORS_ORIGINS: string[];
    PROBE_INTERVAL_SECONDS: number;
    PROBE_TIMEOUT_MS: number;
    PROBE_ALLOW_NETWORKS: string[];
    PROBE_CA_FILE?: string;
    PROBE_CONCURRENCY: number;
    PROBE_HOST_CONCURRENCY?: number;
    RESULTS_RETENTION_DAYS: number;
    AUDIT_RETENTION_DAYS: number;
    RUNNER: "on" | "off";
    RUNNER_LOCATION: string;
    METRICS_PER_PROBE: "true" | "false";
    METRICS_PORT?: number;
    NOTIFICATION_LEASE_MS: number;
    NOTIFY_CONCURRENCY: number;
    NOTIFY_TARGET_CONCURRENCY: number;
    NOTIFY_BREAKER_FAILURES: number;
    IAM_ALIVE_WEBHOOK_URL?: string;
    IAM_ALIVE_WEBHOOK_SECRET?: string;
    SMTP_URL?: string;
    MAIL_FROM?: string;
    MAIL_TO?: string[];
    SESSION_IDLE_MINUTES: number;
    SESSION_MAX_HOURS: number;
    OIDC_ISSUER?: string;
    OIDC_CLIENT_ID?: string;
    OIDC_CLIENT_SECRET?: string;
    OIDC_NAME?: string;
    OIDC_SCOPES: string;
    OIDC_DEFAULT_ROLE: "none" | "viewer" | "editor" | "admin";
    OIDC_ROLE_CLAIM: string;
    OIDC_ADMIN_GROUPS: string[];
    OIDC_EDITOR_GROUPS: string[];
    OIDC_VIEWER_GROUPS: string[];
    OIDC_ALLOWED_DOMAINS: string[];
    OIDC_PROJECTS_CLAIM?: string;
  };
  return {
    port: c.PORT,
    host: c.HOST,
    publicUrl: c.PUBLIC_URL,
    apiKeys: c.SERVICE_API_KEY,
    readOnlyApiKeys: c.SERVICE_API_KEYS_READONLY ?? [],
    probeSecretHeaders: c.PROBE_SECRET_HEADERS,
    databaseUrl: c.DATABASE_URL,
    databasePoolSize: c.DATABASE_POOL_SIZE,
    databaseConnectTimeoutMs: c.DATABASE_CONNECT_TIMEOUT_MS,
    databaseStatementTimeoutMs: c.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseQueryDeadlineMs: c.DATABASE_QUERY_DEADLINE_MS,
    dataDir: c.DATA_DIR,
    connections: {
      maxConnections: c.MAX_CONNECTIONS,
      headersTimeoutMs: c.HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: c.BODY_TIMEOUT_MS,
      idleTimeoutMs: c.IDLE_TIMEOUT_MS,
    },
    logLevel: c.LOG_LEVEL,
    logSummarySeconds: c.LOG_SUMMARY_SECONDS,
    maxAnswerBytes: c.MAX_ANSWER_BYTES,
    rateLimitPerSecond: c.RATE_LIMIT_PER_SECOND,
    authFailuresPerSecond: c.AUTH_FAILURES_PER_SECOND,
    trustedProxies: c.TRUSTED_PROXIES,
    corsOrigins: c.CORS_ORIGINS,
    probeIntervalSeconds: c.PROBE_INTERVAL_SECONDS,
    probeTimeoutMs: c.PROBE_TIMEOUT_MS,
    probeAllowNetworks: c.PROBE_ALLOW_NETWORKS,
    probeCa: c.PROBE_CA_FILE,
    probeConcurrency: c.PROBE_CONCURRENCY,
    probeHostConcurrency: Math.min(
      c.PROBE_CONCURRENCY,
      c.PROBE_HOST_CONCURRENCY ?? Math.max(1, Math.ceil(c.PROBE_CONCURRENCY / 4)),
    ),
    resultsRetentionDays: c.RESULTS_RETENTION_DAYS,
    auditRetentionDays: c.AUDIT_RETENTION_DAYS,
    runner: c.RUNNER === "on",
    runnerLocation: c.RUNNER_LOCATION,
    metricsPerProbe: c.METRICS_PER_PROBE === "true",
    metricsPort: c.METRICS_PORT,
    notificationLeaseMs: c.NOTIFICATION_LEASE_MS,
    delivery: {
      concurrency: c.NOTIFY_CONCURRENCY,
      perTarget: Math.min(c.NOTIFY_TARGET_CONCURRENCY, c.NOTIFY_CONCURRENCY),
      breakerFailures: c.NOTIFY_BREAKER_FAILURES,
    },
    ...(c.SMTP_URL && c.MAIL_FROM && { mail: { smtpUrl: c.SMTP_URL, from: c.MAIL_FROM } }),
    iamAlive: {
      ...(c.IAM_ALIVE_WEBHOOK_URL && {
        webhook: { url: c.IAM_ALIVE_WEBHOOK_URL, secret: c.IAM_ALIVE_WEBHOOK_SECRET },
      }),
      ...(c.SMTP_URL && c.MAIL_FROM && c.MAIL_TO && {
        mail: { smtpUrl: c.SMTP_URL, from: c.MAIL_FROM, to: c.MAIL_TO },
      }),
    },
    sessions: {
      idleMs: c.SESSION_IDLE_MINUTES * 60_000,
      absoluteMs: c.SESSION_MAX_HOURS * 3_600_000,
    },
    ...(c.OIDC_ISSUER && c.OIDC_CLIENT_ID && c.OIDC_CLIENT_SECRET && {
      oidc: {
        issuer: c.OIDC_ISSUER,
        clientId: c.OIDC_CLIENT_ID,
        clientSecret: c.OIDC_CLIENT_SECRET,
        name: c.OIDC_NAME ?? new URL(c.OIDC_ISSUER).host,
        scopes: c.OIDC_SCOPES,
        defaultRole: c.OIDC_DEFAULT_ROLE === "none" ? null : c.OIDC_DEFAULT_ROLE,
        roleClaim: c.OIDC_ROLE_CLAIM,
        adminGroups: c.OIDC_ADMIN_GROUPS,
        editorGroups: c.OIDC_EDITOR_GROUPS,
        viewerGroups: c.OIDC_VIEWER_GROUPS,
        allowedDomains: c.OIDC_ALLOWED_DOMAINS,
        projectsClaim: c.OIDC_PROJECTS_CLAIM,
      },
    }),
  };
}

/** The remote runner's settings (`deno task runner:remote`, docs/locations.md). */
export interface RemoteRunnerConfig {
  /** The service's origin, such as `https://probes.example.com`. */
  serviceUrl: string;
  /** The location's token (`plt_…`). */
  token: string;
  /** CIDRs opened to probes despite the network policy, on this runner's network. */
  probeAllowNetworks: string[];
  /** The authorities `tls://` probes trust: `PROBE_CA_FILE`'s and the system's; unset, the system's. */
  probeCa?: string;
  /** Runs in flight at once. */
  concurrency: number;
  /** A run's timeout when the service names none (it always does). */
  probeTimeoutMs: number;
  /** The runner's name among its location's runners; `<host>:<pid>:<random>` when unset. */
  runnerId?: string;
  /** Results kept while the service cannot be reached: at most this many, this old. */
  bufferMax: number;
  bufferMaxAgeMs: number;
  logLevel: (typeof LOG_LEVELS)[number];
}

const remoteRunnerSchema = z.object({
  SERVICE_URL: z.string({ error: "is required" })
    .refine(isUrlOf(["http:", "https:"]), "must be an http:// or https:// URL")
    .transform((v) => new URL(v).origin),
  LOCATION_TOKEN: z.string({ error: "is required" })
    .refine((v) => v.startsWith("plt_"), "must be a location token (plt_…)"),
  PROBE_ALLOW_NETWORKS: configSchema.shape.PROBE_ALLOW_NETWORKS,
  PROBE_CA_FILE: configSchema.shape.PROBE_CA_FILE,
  PROBE_CONCURRENCY: optional(z.coerce.number().int().min(1).max(10_000).default(200)),
  PROBE_TIMEOUT_MS: configSchema.shape.PROBE_TIMEOUT_MS,
  RUNNER_ID: optional(z.string().max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/).optional()),
  RESULT_BUFFER_MAX: optional(z.coerce.number().int().min(100).max(1_000_000).default(100_000)),
  RESULT_BUFFER_MINUTES: optional(z.coerce.number().int().min(1).max(1440).default(10)),
  LOG_LEVEL: configSchema.shape.LOG_LEVEL,
});

/** Reads the remote runner's configuration once; throws ConfigError on a bad or missing value. */
export function parseRemoteRunnerConfig(
  env: Record<string, string | undefined>,
): RemoteRunnerConfig {
  const parsed = remoteRunnerSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  }
  const c = parsed.data as {
    SERVICE_URL: string;
    LOCATION_TOKEN: string;
    PROBE_ALLOW_NETWORKS: string[];
    PROBE_CA_FILE?: string;
    PROBE_CONCURRENCY: number;
    PROBE_TIMEOUT_MS: number;
    RUNNER_ID?: string;
    RESULT_BUFFER_MAX: number;
    RESULT_BUFFER_MINUTES: number;
    LOG_LEVEL: RemoteRunnerConfig["logLevel"];
  };
  return {
    serviceUrl: c.SERVICE_URL,
    token: c.LOCATION_TOKEN,
    probeAllowNetworks: c.PROBE_ALLOW_NETWORKS,
    probeCa: c.PROBE_CA_FILE,
    concurrency: c.PROBE_CONCURRENCY,
    probeTimeoutMs: c.PROBE_TIMEOUT_MS,
    runnerId: c.RUNNER_ID,
    bufferMax: c.RESULT_BUFFER_MAX,
    bufferMaxAgeMs: c.RESULT_BUFFER_MINUTES * 60_000,
    logLevel: c.LOG_LEVEL,
  };
}
