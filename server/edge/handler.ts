/**
 * The service's HTTP edge, assembled: the parts each route of `router.ts` is answered by, from
 * the service's pieces (the router of procedures and its document, the database, the key check,
 * the limits). Health checks and the documentation need no key, nor do the public pages (status
 * pages, badges, the dashboard); `/api/v1` (`server/edge/rest/`), `/trpc` (`server/procedures/`) and the
 * keyed endpoints do. One log line per request with a valid key to the API; every other request
 * is counted in a summary line per window (`access_log.ts`). Answers are bounded in size
 * (`server/procedures/answer_size.ts`). Every failure is answered through the error contract
 * (`server/procedures/errors.ts`, built by `answers.ts`).
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { isDatabaseUnavailable } from "../storage/unavailable.ts";
import { type ApiError, apiError, isUnexpected, toApiError } from "../procedures/errors.ts";
import { errorFields, type Logger } from "../base/log.ts";
import { createRequestSummary, type RequestSummary } from "./access_log.ts";
import { DEFAULT_MAX_ANSWER_BYTES } from "../procedures/answer_size.ts";
import type { HttpMetrics } from "./edge_types.ts";
import { createRestOperations } from "./rest/handler.ts";
import {
  type Context,
  createContext,
  type RequestFacts,
  type Services,
} from "../procedures/context.ts";
import { createAuditor } from "../procedures/audit.ts";
import { createTrpcFastPath } from "../procedures/fast_path.ts";
import { type Operation, OPERATIONS } from "../procedures/operations.ts";
import type { AppRouter } from "../procedures/router.ts";
import { json, ours, restError, SECURITY_HEADERS, trpcError } from "./answers.ts";
import { createCors } from "./cors.ts";
import type { Config } from "../base/config.ts";
import { createClientAddress, parseTrustedProxies } from "../base/client_address.ts";
import type { Principal } from "../domain/principal.ts";
import { createDocsHandler } from "./docs.ts";
import type { KeyedEndpoint, PublicPage } from "./edge_types.ts";
import { admittedOf, type Client, type EdgeContext, OTHER_ROUTE } from "./middleware.ts";
import { createRateLimiter } from "./rate_limit.ts";
import { createEdge, REST_PREFIX, TRPC_PREFIX } from "./router.ts";
import { createTrpcEndpoint } from "./trpc_endpoint.ts";
import { isRead } from "./methods.ts";
import { locationOfToken, locationTokensVersion, tokenDigest } from "../domain/locations.ts";
import { TtlCache } from "../base/ttl_cache.ts";
import type { PingEndpoint } from "./pings.ts";
import { PING_PREFIX } from "@probe/shared";
import { createStoredKeyCheck } from "../domain/access/stored_keys.ts";
import { AUTH_PREFIX, type AuthDeps, createAuthEndpoints, sessionAdmission } from "./auth.ts";

export { REST_PREFIX, TRPC_PREFIX };
export type { Client, KeyedEndpoint, PublicPage };

export interface HttpDeps {
  router: AppRouter;
  /** The OpenAPI document of the router's REST operations, as served (`readOpenApiJson`). */
  openApiJson: Uint8Array;
  db: Db;
  /**
   * Who presents the key (`createPrincipalCheck` for the keys from the environment), or null
   * for no valid key.
   */
  checkKey: (presented: string | null) => Principal | null | Promise<Principal | null>;
  /**
   * How long what a key made through the API is kept (ms): a deleted or rotated key stops within
   * this in other processes (at once in this one). 1 s unless given; 0 looks every request up.
   */
  storedKeyTtlMs?: number;
  /**
   * How long what a location token names is kept (ms): a rotated or revoked token stops within
   * this in other processes (at once in this one). 2 s unless given; 0 looks every request up.
   */
  locationTokenTtlMs?: number;
  log: Logger;
  /**
   * The settings of the configuration the edge reads (`EdgeConfig`); a setting left out is at
   * `EDGE_DEFAULTS`.
   */
  config?: Partial<EdgeConfig>;
  /** The rate limits' time (ms): the system's by default (tests drive one). */
  now?: () => number;
  /** What procedures may use besides the database (`server/procedures/context.ts`). */
  services?: Services;
  /**
   * What is served without a key besides health checks and the documentation (the status pages,
   * badges, the dashboard, under the paths `router.ts` gives them): each answers the requests
   * that are its own, and null for the rest. Asked in order; their answers keep their own
   * headers.
   */
  pages?: PublicPage[];
  /** Heartbeats' ping URLs (`pings.ts`); none when absent. */
  pings?: PingEndpoint;
  /**
   * Dashboard sessions (`auth.ts`): sign-in and sign-out under `/auth`, and the session cookie
   * as a way in besides a key; neither when absent.
   */
  auth?: Omit<AuthDeps, "authFailureLimiter">;
  /**
   * Endpoints outside `/api/v1` and `/trpc` that need a key (such as `/metrics`): each is asked
   * for its exact path after the key has been checked and the rate limit taken, and is told the
   * key's scope (it refuses what the scope may not do itself, with `forbidden`).
   */
  keyed?: KeyedEndpoint[];
  /** Told of each request by route template, and of rate-limit refusals (`/metrics`). */
  metrics?: HttpMetrics | null;
  /**
   * Where requests outside the keyed API are counted (`access_log.ts`); one of its own over
   * `log` with the default window when absent.
   */
  summary?: RequestSummary;
}

/**
 * The settings of the configuration (`parseConfig`, `server/base/config.ts`) the edge reads:
 * `MAX_ANSWER_BYTES`, the rate limits, `TRUSTED_PROXIES` and `CORS_ORIGINS`.
 */
export type EdgeConfig = Pick<
  Config,
  | "maxAnswerBytes"
  | "rateLimitPerSecond"
  | "authFailuresPerSecond"
  | "trustedProxies"
  | "corsOrigins"
>;

/** A setting left out of `HttpDeps.config`: the default bound; no limits, proxies nor CORS. */
const EDGE_DEFAULTS: EdgeConfig = {
  maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES,
  rateLimitPerSecond: 0,
  authFailuresPerSecond: 0,
  trustedProxies: [],
  corsOrigins: [],
};

/** Client addresses whose failed key checks are counted at once (the least recent is dropped). */
const MAX_TRACKED_ADDRESSES = 10_000;

/** The most calls one tRPC batch may carry; each takes a token of the rate limit. */
export const MAX_TRPC_BATCH = 50;

/** The settings of `config` that are given (a key present with `undefined` is left out). */
function given<T extends object>(config: Partial<T> = {}): Partial<T> {
  return Object.fromEntries(
    Object.entries(config).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

/**
 * Logs a failure by what it answers: 503 one line without a stack, unexpected ones whole; both
 * with the id of the request (`request_id`, as in its log line).
 */
function failureLog(log: Logger) {
  return (error: unknown, requestId: string | undefined, answer: ApiError = toApiError(error)) => {
    if (answer.status === 503) {
      // Expected while the database is down: one line without a stack.
      const what = isDatabaseUnavailable(error) ? "database unavailable" : "unavailable";
      log.warn(what, { request_id: requestId, error: errorFields(error).error });
    } else if (isUnexpected(answer)) {
      log.error("request failed", { request_id: requestId, ...errorFields(error) });
    }
  };
}

/**
 * What a location token names, from its digest, kept `ttlMs` (by the digest, never the token)
 * and dropped when this process rotates or deletes one (`locationTokensVersion`).
 */
function locationTokenCheck(db: Db, ttlMs: number) {
  const cache = new TtlCache<string | null>({ ttlMs, maxEntries: 10_000 });
  return (token: string) =>
    ttlMs === 0
      ? locationOfToken(db, token)
      : cache.get(tokenDigest(token), locationTokensVersion(db), () => locationOfToken(db, token));
}

/** The keys from the environment first (constant time), then the stored ones (`psk_…`). */
function keyOf(
  configured: HttpDeps["checkKey"],
  stored: (presented: string) => Promise<Principal | null>,
): HttpDeps["checkKey"] {
  return async (presented) =>
    await configured(presented) ?? (presented === null ? null : await stored(presented));
}

/**
 * A request's facts for its audit entry (`Context.request`), read from the request only when an
 * entry is written: most requests write none.
 */
class EdgeRequestFacts implements RequestFacts {
  readonly requestId: string;
  #c: EdgeContext;
  #addressOf: (peer: string | undefined, headers: Headers) => string;
  #address: string | undefined;

  constructor(c: EdgeContext, addressOf: (peer: string | undefined, headers: Headers) => string) {
    this.#c = c;
    this.#addressOf = addressOf;
    this.requestId = c.env.requestId;
  }

  get address(): string {
    return this.#address ??= this.#addressOf(this.#c.env.client?.address, this.#c.req.raw.headers);
  }

  get userAgent(): string | null {
    return this.#c.req.raw.headers.get("user-agent");
  }
}

/** `/healthz` and `/readyz` (GET, and HEAD as its GET): alive, and able to reach the database. */
function healthChecks(db: Db) {
  return {
    healthz(c: EdgeContext): Response | null {
      if (!isRead(c.req.method)) return null;
      c.env.seen.route = "/healthz";
      return json(200, { status: "ok" });
    },
    async readyz(c: EdgeContext): Promise<Response | null> {
      if (!isRead(c.req.method)) return null;
      c.env.seen.route = "/readyz";
      try {
        await sql`select 1`.execute(db);
        return json(200, { status: "ready" });
      } catch {
        return json(503, { status: "unavailable" });
      }
    },
  };
}

/** The public pages, asked in order; the answer's route label is the page's first segment. */
function publicPages(pages: PublicPage[], labels: RouteLabels) {
  return async (c: EdgeContext): Promise<Response | null> => {
    const url = c.env.url;
    for (const page of pages) {
      const answer = await page(c.req.raw, url);
      if (answer) {
        c.env.seen.route = labels.page(url.pathname);
        return answer;
      }
    }
    return null;
  };
}

export function createHttpHandler(
  deps: HttpDeps,
): (request: Request, client?: Client) => Promise<Response> {
  const { router, openApiJson, db, log, services, keyed = [], now } = deps;
  const config: EdgeConfig = { ...EDGE_DEFAULTS, ...given(deps.config) };
  const { maxAnswerBytes } = config;
  const rateLimiter = createRateLimiter({ perSecond: config.rateLimitPerSecond, now });
  const authFailureLimiter = createRateLimiter({
    perSecond: config.authFailuresPerSecond,
    now,
    maxKeys: MAX_TRACKED_ADDRESSES,
  });
  const addressOf = createClientAddress(parseTrustedProxies(config.trustedProxies.join(",")));
  const logFailure = failureLog(log);
  const failed = (error: unknown, ctx: Context) => logFailure(error, ctx.request?.requestId);
  const rest = createRestOperations({
    router,
    onError: failed,
    maxAnswerBytes,
  });
  const trpc = createTrpcEndpoint({
    router,
    endpoint: TRPC_PREFIX,
    fastPath: createTrpcFastPath({
      router,
      onError: failed,
      headers: SECURITY_HEADERS,
      maxAnswerBytes,
    }),
    onError: failed,
    maxAnswerBytes,
  });
  const docs = createDocsHandler({
    openApiJson,
    openApiPath: `${REST_PREFIX}/openapi.json`,
  });
  const labels = routeLabels(OPERATIONS);
  const auth = deps.auth && createAuthEndpoints({ ...deps.auth, authFailureLimiter });
  const health = healthChecks(db);
  const audit = createAuditor(router);
  /** The procedures' context for a request the key check let in. */
  const contextOf = (c: EdgeContext) => {
    const { key, scope, principal, location } = admittedOf(c);
    const ctx = createContext({
      db,
      authenticated: true,
      scope,
      principal,
      location,
      origin: c.env.url.origin,
      services,
      chargeKey: rateLimiter ? (cost) => rateLimiter.charge(key, cost) : undefined,
    });
    ctx.request = new EdgeRequestFacts(c, addressOf);
    ctx.audit = audit;
    return ctx;
  };

  return createEdge({
    observe: { log, metrics: deps.metrics, summary: deps.summary ?? createRequestSummary({ log }) },
    keys: {
      checkKey: keyOf(deps.checkKey, createStoredKeyCheck({ db, ttlMs: deps.storedKeyTtlMs })),
      checkLocationToken: locationTokenCheck(db, deps.locationTokenTtlMs ?? 2000),
      checkSession: deps.auth && sessionAdmission(deps.auth.sessions, deps.auth.site),
      rateLimiter,
      authFailureLimiter,
      clientAddress: addressOf,
      metrics: deps.metrics,
    },
    cors: createCors(config.corsOrigins),
    healthz: health.healthz,
    readyz: health.readyz,
    docs: async (c) => {
      const path = c.env.url.pathname;
      const answer = await docs(c.req.raw, path);
      if (answer) c.env.seen.route = labels.docs(path);
      return answer;
    },
    pages: publicPages(deps.pages ?? [], labels),
    auth: async (c) => {
      const address = addressOf(c.env.client?.address, c.req.raw.headers);
      const answer = await auth?.(c.req.raw, c.env.url, address) ?? null;
      if (answer) c.env.seen.route = `${AUTH_PREFIX}/*`;
      return answer;
    },
    pings: async (c) => {
      const address = addressOf(c.env.client?.address, c.req.raw.headers);
      const answer = await deps.pings?.(c.req.raw, c.env.url, address) ?? null;
      if (answer) c.env.seen.route = `${PING_PREFIX}*`;
      return answer;
    },
    refuseRest: (_c, error) => restError(error),
    rest: rest.map(({ route, answer }) => ({
      method: route.method,
      path: route.pattern,
      label: REST_PREFIX + route.template,
      handle: async (c) => {
        const url = c.env.url;
        const path = url.pathname.slice(REST_PREFIX.length);
        const result = await answer({ request: c.req.raw, url, path, ctx: contextOf(c) });
        if (result.failure) {
          logFailure(result.failure.error, c.env.requestId, result.failure.answer);
        }
        // A failure's answer may carry headers of its own (`Retry-After`).
        return result.failure ? restError(result.failure.answer) : ours(result.body, result.status);
      },
    })),
    trpcLabel: (c) => labels.trpc(c.env.url.pathname, c.env.url),
    refuseTrpc: (_c, error) => trpcError(error),
    trpcCalls: (c) => {
      const url = c.env.url;
      if (!url.searchParams.has("batch")) return 1;
      const calls = url.pathname.slice(TRPC_PREFIX.length + 1).split(",").length;
      if (calls <= MAX_TRPC_BATCH) return calls;
      return apiError("bad_request", `A batch holds at most ${MAX_TRPC_BATCH} calls`);
    },
    trpc: (c) => {
      const url = c.env.url;
      const procedure = url.pathname.slice(TRPC_PREFIX.length + 1);
      return trpc({ request: c.req.raw, url, procedure, ctx: contextOf(c) });
    },
    keyed,
    refuseKeyed: (_c, error) => restError(error),
    onError: (error, requestId) => {
      log.error("request failed", { request_id: requestId, ...errorFields(error) });
      return restError(apiError("internal"));
    },
    notFound: () => restError(apiError("not_found")),
  });
}

type RouteLabels = ReturnType<typeof routeLabels>;

/**
 * Route labels for metrics, bounded whatever callers send (a REST operation's is its template,
 * given by the router): `/trpc/<procedure>` for the router's procedures, and a label per public page.
 */
function routeLabels(operations: readonly Operation[]) {
  const procedures = new Set(operations.map((o) => o.procedure.join(".")));
  return {
    trpc(path: string, url: URL): string {
      if (url.searchParams.has("batch")) return `${TRPC_PREFIX}/{batch}`;
      const procedure = path.slice(TRPC_PREFIX.length + 1);
      return procedures.has(procedure) ? path : OTHER_ROUTE;
    },
    /** The documentation: the OpenAPI document, the reference page and its files. */
    docs(path: string): string {
      return path.startsWith("/docs/") ? "/docs/{file}" : path;
    },
    /**
     * A public page's answer, by its first segment (`/status/*`, `/badge/*`, `/ui/*`):
     * bounded, since each page answers only under its own prefix.
     */
    page(path: string): string {
      const segment = path.split("/", 2)[1];
      return segment ? `/${segment}/*` : "/";
    },
  };
}
