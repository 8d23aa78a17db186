/**
 * The edge's cross-cutting work, each piece written once: what every request goes through
 * around the router (`observe`), the HEAD length, and the key check; `router.ts` sets where each
 * runs. Our own rather than Hono's maintained middleware, where the
 * answers they give are pinned by the interface tests: Hono's `cors` answers a preflight with
 * other headers and no `vary` on every answer, its `secureHeaders` adds a dozen headers the
 * service never sent, and its `bodyLimit` answers 413 with its own body (the service's body limits
 * are read where the body is read: `body.ts`).
 *
 * @module
 */
import type { Context as HonoContext, MiddlewareHandler } from "hono";
import type { ApiError } from "../procedures/errors.ts";
import { apiError, toApiError } from "../procedures/errors.ts";
import type { Logger } from "../base/log.ts";
import type { HttpMetrics } from "./edge_types.ts";
import type { RequestSummary } from "./access_log.ts";
import { SECURITY_HEADERS } from "./answers.ts";
import { type Scope, scopeOf } from "../domain/access/api_key.ts";
import type { Principal } from "../domain/principal.ts";
import type { Cors } from "./cors.ts";
import { presentedKey } from "../domain/access/presented_key.ts";
import type { RateLimiter } from "./rate_limit.ts";
import { LOCATION_TOKEN_PREFIX } from "../domain/location_token.ts";
import type { SessionAdmission } from "./auth.ts";

/** The peer of a request, as the server layer knows it. */
export interface Client {
  address: string;
}

/** What routing learnt of a request, for the metrics and the log. */
export interface Seen {
  /** Its route template (a bounded label). */
  route: string;
  /** Whether it carried a valid key to the API: logged a line each; the rest are counted. */
  keyed: boolean;
}

/** The route label of a request no route of ours answered (and of CORS preflights). */
export const OTHER_ROUTE = "other";

/**
 * What the edge knows of a request as it passes, one object a request (Hono's bindings, so that
 * no map of variables is built): made by `observe`, completed by `keyCheck`.
 */
export interface Exchange {
  client?: Client;
  url: URL;
  seen: Seen;
  /** The request's id (`newRequestId`): in its log line and in the log of its failure. */
  requestId: string;
  /**
   * Who is calling, its scope (what its role lets it do, or `location`) and the key it
   * presented (or its session's name, for the rate limit), once `keyCheck` let the request in.
   */
  admitted?: Admitted;
}

/** A request the key check let in: who calls, and with what. */
export interface Admitted {
  principal: Principal;
  scope: Scope;
  key: string;
  /** The location of a location token (`scope: "location"`). */
  location?: string;
}

/** What the edge's handlers share about a request. */
export interface EdgeEnv {
  Bindings: Exchange;
}

export type EdgeContext = HonoContext<EdgeEnv>;

/** Paths are logged up to this many characters, and methods outside this set as OTHER. */
const LOGGED_PATH_LENGTH = 256;
const LOGGED_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** This process's part of request ids: ids of two processes (or two runs) do not meet. */
const REQUEST_ID_PREFIX = crypto.getRandomValues(new Uint32Array(1))[0].toString(36).padStart(
  7,
  "0",
);
let requestCount = 0;

/**
 * A new request id, unique in this process and unlikely to meet another process's: the process's
 * random prefix and a count (`k3x9a2f-1b`). Not a secret and never sent to the client: it ties a
 * request's log line to the log of its failure.
 */
export function newRequestId(): string {
  return `${REQUEST_ID_PREFIX}-${(++requestCount).toString(36)}`;
}

/** What `observe` observes with: the log, the metrics and the summary of unkeyed requests. */
export interface Observers {
  log: Logger;
  metrics?: HttpMetrics | null;
  summary: RequestSummary;
}

/**
 * What every request goes through, whatever answers it, around the router (not a layer of its:
 * that would cost every request a dispatch of its middleware), from the outside in:
 *
 * 1. the request's id, timing, metrics by route label, and its log line or count (`observed`);
 * 2. `nosniff` and `no-store` on every answer that does not say otherwise;
 * 3. CORS for the listed origins, when there are any: preflights answered here, every answer
 *    decorated (`Vary`, the origin).
 *
 * A HEAD keeping its GET answer's length is the router's (`keepHeadLength`), since only there is
 * the GET answer's body still at hand.
 */
export function observe(
  { observers, cors }: { observers: Observers; cors?: Cors | null },
  route: (request: Request, exchange: Exchange) => Promise<Response>,
): (request: Request, client?: Client) => Promise<Response> {
  const done = observed(observers);
  return async (request, client) => {
    const started = performance.now();
    const exchange: Exchange = {
      client,
      url: new URL(request.url),
      seen: { route: OTHER_ROUTE, keyed: false },
      requestId: newRequestId(),
    };
    const response = cors?.preflight(request) ?? await route(request, exchange);
    cors?.decorate(request, response.headers);
    securityHeaders(response.headers);
    done(request.method, exchange, response, started);
    return response;
  };
}

/**
 * Hono answers HEAD with the GET route's answer less its body: the length that body had is kept
 * (`content-length`, as the connection layer sends it for a HEAD), and a streamed body is
 * cancelled rather than left unread. Router middleware, for HEAD requests only.
 */
export async function keepHeadLength(c: EdgeContext, next: () => Promise<void>): Promise<void> {
  await next();
  const response = c.res;
  if (response.headers.has("content-length") || response.body === null) return;
  if (response.headers.has("transfer-encoding")) {
    await response.body.cancel().catch(() => {});
    c.res = new Response(null, response);
    return;
  }
  const bytes = await response.bytes();
  const headers = new Headers(response.headers);
  headers.set("content-length", String(bytes.byteLength));
  c.res = undefined;
  c.res = new Response(bytes, { status: response.status, headers });
}

/**
 * The end of a request's observation: its metrics (by route label) and its log line: one line per
 * request with a valid key to the API, with its id (`request_id`, also in the log of its
 * failure); every other request is counted in a summary line per window (`access_log.ts`), since
 * anyone can send those, as fast as they like.
 */
function observed({ log, metrics, summary }: Observers) {
  return (requestMethod: string, exchange: Exchange, response: Response, started: number) => {
    const { seen } = exchange;
    const method = LOGGED_METHODS.has(requestMethod) ? requestMethod : "OTHER";
    const ms = performance.now() - started;
    metrics?.request(seen.route, method, response.status, ms / 1000);
    if (!seen.keyed) {
      summary.count(seen.route, method, response.status);
      return;
    }
    summary.tick();
    const path = exchange.url.pathname;
    log.info("request", {
      request_id: exchange.requestId,
      method,
      path: path.length > LOGGED_PATH_LENGTH ? `${path.slice(0, LOGGED_PATH_LENGTH)}…` : path,
      status: response.status,
      duration_ms: Math.round(ms * 100) / 100,
    });
  };
}

const SECURITY_HEADER_LIST = Object.entries(SECURITY_HEADERS);

/** `nosniff` and `no-store` on an answer that does not say otherwise. */
function securityHeaders(headers: Headers): void {
  if (headers.has("x-content-type-options")) return;
  for (const [name, value] of SECURITY_HEADER_LIST) headers.set(name, value);
}

/** A location token's caller: the runner protocol of its location, and nothing else. */
function locationPrincipal(location: string): Principal {
  return { source: "location_token", name: location, role: "viewer", projects: [] };
}

/** How a surface refuses: its error shape (REST's or tRPC's). */
export type Refuse = (c: EdgeContext, error: ApiError) => Response;

/**
 * The API key and the rate limits, for the surfaces that need a key: who presents the key (its
 * principal, and the scope its role gives) is decided here, once (the procedures' middleware
 * enforces it); a request without a valid key
 * is refused 401, or 429 once its address has failed too often; a valid one takes `calls`
 * tokens of its key's rate limit (a `/trpc` batch, one per call), or is refused 429 with
 * `Retry-After`. Resolves with the refusal, or null once the request is admitted
 * (`exchange.admitted`).
 */
export function keyCheck(
  {
    checkKey,
    checkLocationToken,
    checkSession,
    rateLimiter,
    authFailureLimiter,
    clientAddress,
    metrics,
  }: {
    /**
     * Who presents the key (`createPrincipalCheck` for the keys from the environment; stored
     * keys are looked up), or null for no valid key.
     */
    checkKey: (presented: string | null) => Principal | null | Promise<Principal | null>;
    /** The location whose token is presented, or null (docs/locations.md). */
    checkLocationToken?: ((presented: string) => Promise<string | null>) | null;
    /** A dashboard session's cookie, for a request without a key (`auth.ts`). */
    checkSession?: ((request: Request, url: URL) => Promise<SessionAdmission>) | null;
    rateLimiter?: RateLimiter | null;
    authFailureLimiter?: RateLimiter | null;
    clientAddress: (peer: string | undefined, headers: Headers) => string;
    metrics?: HttpMetrics | null;
  },
  refuse: Refuse,
  /** The calls a request makes, or why it is refused (400): one unless told. */
  callsOf: (c: EdgeContext) => number | ApiError = () => 1,
): (c: EdgeContext) => Promise<Response | null> {
  const limited = (c: EdgeContext, retryAfterSeconds: number) => {
    const response = refuse(c, apiError("rate_limited"));
    response.headers.set("retry-after", String(retryAfterSeconds));
    return response;
  };
  return async (c) => {
    const exchange = c.env;
    const key = presentedKey(c.req.raw.headers);
    let principal: Principal | null;
    try {
      principal = await checkKey(key);
    } catch (error) {
      // A stored key is looked up in the database: while it is down, 503 (not 500).
      return refuse(c, toApiError(error));
    }
    let location: string | undefined;
    if (
      !principal && key !== null && checkLocationToken && key.startsWith(LOCATION_TOKEN_PREFIX)
    ) {
      const tokenOf = await checkLocationToken(key);
      if (tokenOf !== null) {
        principal = locationPrincipal(tokenOf);
        location = tokenOf;
      }
    }
    // A dashboard session: its principal, and a name of its own for the rate limit.
    let limitedAs = key;
    if (!principal && key === null && checkSession) {
      const session = await checkSession(c.req.raw, exchange.url);
      if (session && "refused" in session) return refuse(c, session.refused);
      principal = session?.principal ?? null;
      limitedAs = session && `session:${session.principal.sessionId}`;
    }
    if (!principal) {
      const address = clientAddress(exchange.client?.address, c.req.raw.headers);
      const failures = authFailureLimiter?.take(address);
      if (failures && !failures.ok) {
        metrics?.refused("auth_failures");
        return limited(c, failures.retryAfterSeconds);
      }
      return refuse(c, apiError("unauthorized"));
    }
    exchange.seen.keyed = true;
    const calls = callsOf(c);
    if (typeof calls !== "number") return refuse(c, calls);
    const admission = rateLimiter?.take(limitedAs!, calls);
    if (admission && !admission.ok) {
      metrics?.refused("key");
      return limited(c, admission.retryAfterSeconds);
    }
    exchange.admitted = { principal, scope: scopeOf(principal), key: limitedAs!, location };
    return null;
  };
}

/** The key check as router middleware: a refusal answers, an admitted request goes on. */
export function keyMiddleware(
  check: (c: EdgeContext) => Promise<Response | null>,
): MiddlewareHandler<EdgeEnv> {
  return async (c, next) => {
    const refused = await check(c);
    if (refused) return refused;
    await next();
  };
}

/** The admitted request's facts; a route behind the key check only. */
export function admittedOf(c: EdgeContext): Admitted {
  const admitted = c.env.admitted;
  if (!admitted) throw new Error("A route behind the key check was reached without it");
  return admitted;
}
