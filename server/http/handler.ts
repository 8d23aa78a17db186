/**
 * The service's one request handler: CORS preflight, health checks, the documentation, then the
 * API key and the rate limit, then `/api/v1` (`server/rest/`) or `/trpc` (`server/trpc/`). One
 * log line per request with a valid key to the API; every other request is counted in a summary
 * line per window (`access_log.ts`). Answers are bounded in size (`answer_size.ts`). Every failure
 * is answered through the error contract (`server/errors.ts`).
 *
 * @module
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { sql } from "kysely";
import type { OpenAPIObject } from "trpc-to-openapi";
import type { Db } from "../db/database.ts";
import { isDatabaseUnavailable } from "../db/unavailable.ts";
import { type ApiError, apiError, isUnexpected, toApiError, trpcErrorShape } from "../errors.ts";
import { errorFields, type Logger } from "../log.ts";
import { createRequestSummary, type RequestSummary } from "./access_log.ts";
import {
  AnswerBudget,
  BATCH_CALLS_AT_ONCE,
  DEFAULT_MAX_ANSWER_BYTES,
  Slots,
} from "./answer_size.ts";
import type { HttpMetrics } from "../metrics/http.ts";
import { createRestHandler } from "../rest/handler.ts";
import { matchRoute, routesOf } from "../rest/routes.ts";
import { type Context, createContext, type Services } from "../trpc/context.ts";
import { createTrpcFastPath, procedureTypes } from "../trpc/fast_path.ts";
import { STREAMED } from "../trpc/pages.ts";
import type { AppRouter } from "../trpc/router.ts";
import { parseJson, readBodyText } from "./body.ts";
import type { Cors } from "./cors.ts";
import type { Scope } from "./api_key.ts";
import { createDocsHandler } from "./docs.ts";
import type { RateLimiter } from "./rate_limit.ts";
import { presentedKey } from "./presented_key.ts";

export const REST_PREFIX = "/api/v1";
export const TRPC_PREFIX = "/trpc";

export interface HttpDeps {
  router: AppRouter;
  /** The OpenAPI document of the router's REST operations (`buildOpenApiDocument`). */
  document: OpenAPIObject;
  db: Db;
  /** The scope of the key presented (`createKeyCheck`), or null for no valid key. */
  checkKey: (presented: string | null) => Scope | null;
  log: Logger;
  /** What procedures may use besides the database (`server/trpc/context.ts`). */
  services?: Services;
  /** Per-key request limit; none when null or absent. */
  rateLimiter?: RateLimiter | null;
  /** Failed key checks per client address; none when null or absent. */
  authFailureLimiter?: RateLimiter | null;
  /** Names a request's client from its peer address (`TRUSTED_PROXIES`); the peer by default. */
  clientAddress?: (peer: string | undefined, headers: Headers) => string;
  /** CORS for listed origins; no CORS headers when null or absent. */
  cors?: Cors | null;
  /** Told of each `/trpc` call the fast path answers (for tests). */
  onFastPath?: (procedure: string) => void;
  /**
   * What is served without a key besides health checks and the documentation (the dashboard,
   * status pages, badges): each answers the requests that are its own, and null for the rest.
   * Asked in order, before the API key is looked at; their answers keep their own headers.
   */
  pages?: PublicPage[];
  /**
   * Endpoints outside `/api/v1` and `/trpc` that need a key (such as `/metrics`): each is asked
   * for its exact path after the key has been checked and the rate limit taken, and is told the
   * key's scope (it refuses what the scope may not do itself, with `forbidden`).
   */
  keyed?: KeyedEndpoint[];
  /** Told of each request by route template, and of rate-limit refusals (`/metrics`). */
  metrics?: HttpMetrics | null;
  /** The most characters of JSON one answer, or one tRPC batch, may build (`MAX_ANSWER_BYTES`). */
  maxAnswerBytes?: number;
  /**
   * Where requests outside the keyed API are counted (`access_log.ts`); one of its own over
   * `log` with the default window when absent.
   */
  summary?: RequestSummary;
}

/** A part of the service that answers some requests without a key; null for the others. */
export type PublicPage = (request: Request, url: URL) => Promise<Response | null>;

/** An endpoint of its own path that needs a key (`HttpDeps.keyed`). */
export interface KeyedEndpoint {
  /** The exact path it answers, such as `/metrics`. */
  path: string;
  handle(request: Request, url: URL, scope: Scope): Promise<Response>;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);
/** The most calls one tRPC batch may carry; each takes a token of the rate limit. */
export const MAX_TRPC_BATCH = 50;
/** Paths are logged up to this many characters, and methods outside this set as OTHER. */
const LOGGED_PATH_LENGTH = 256;
const LOGGED_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const SECURITY_HEADERS = { "x-content-type-options": "nosniff", "cache-control": "no-store" };
const JSON_HEADERS = { "content-type": "application/json", ...SECURITY_HEADERS };
const STREAMED_JSON_HEADERS = { ...JSON_HEADERS, ...STREAMED };

/** Answers built here carry the security headers from the start (cheaper than adding them). */
function ours(body: string | ReadableStream<Uint8Array> | null, status: number): Response {
  const headers = body === null
    ? SECURITY_HEADERS
    : typeof body === "string"
    ? JSON_HEADERS
    : STREAMED_JSON_HEADERS;
  return new Response(body, { status, headers });
}

const json = (status: number, body: unknown) => ours(JSON.stringify(body), status);
const restError = ({ status, body }: ApiError) => json(status, body);

/**
 * The REST error answer for `error` (its status, the error body, the security headers), with
 * `headers` added: for keyed endpoints' own refusals.
 */
export function errorAnswer(error: ApiError, headers: Record<string, string> = {}): Response {
  const response = restError(error);
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}
const trpcError = (error: ApiError) => json(error.status, { error: trpcErrorShape(error) });

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** The peer of a request, as the server layer knows it. */
export interface Client {
  address: string;
}

export function createHttpHandler(
  {
    router,
    document,
    db,
    checkKey,
    log,
    services,
    rateLimiter,
    authFailureLimiter,
    clientAddress = (peer) => peer ?? "unknown",
    cors,
    onFastPath,
    pages = [],
    keyed = [],
    metrics,
    maxAnswerBytes = DEFAULT_MAX_ANSWER_BYTES,
    summary = createRequestSummary({ log }),
  }: HttpDeps,
): (request: Request, client?: Client) => Promise<Response> {
  const logFailure = (error: unknown, answer: ApiError = toApiError(error)) => {
    if (answer.status === 503) {
      // Expected while the database is down: one line without a stack.
      const what = isDatabaseUnavailable(error) ? "database unavailable" : "unavailable";
      log.warn(what, { error: errorFields(error).error });
    } else if (isUnexpected(answer)) log.error("request failed", errorFields(error));
  };
  const rest = createRestHandler({
    router,
    document,
    onError: (error) => logFailure(error),
    maxAnswerBytes,
  });
  const trpcFastPath = createTrpcFastPath({
    router,
    document,
    onError: (error) => logFailure(error),
    headers: SECURITY_HEADERS,
    maxAnswerBytes,
  });
  // Shared by every batch: big batches at once wait for each other, not ahead of other callers.
  const batchSlots = new Slots(BATCH_CALLS_AT_ONCE);
  const docs = createDocsHandler({
    openApiJson: JSON.stringify(document),
    openApiPath: `${REST_PREFIX}/openapi.json`,
  });

  async function trpc(request: Request, url: URL, path: string, ctx: Context) {
    // The input travels in `?input=` or in the body: read within the limits, parsed once.
    let text: string | null = null;
    if (BODY_METHODS.has(request.method)) {
      const read = await readBodyText(request);
      if (!read.ok) return trpcError(read.error);
      text = read.value;
    }
    const raw = text ?? url.searchParams.get("input");
    let input: unknown = undefined;
    if (raw) {
      const parsed = parseJson(raw);
      if (!parsed.ok) return trpcError(parsed.error);
      input = parsed.value;
    }
    const procedure = path.slice(TRPC_PREFIX.length + 1);
    const fast = await trpcFastPath({ request, url, path: procedure, input, ctx });
    if (fast) {
      onFastPath?.(procedure);
      return fast;
    }
    // Batches (and whatever else tRPC's handler answers) count their queries' results as they
    // resolve: past the limit the calls left are not made, and the batch is answered 413 whole.
    const answerBudget = new AnswerBudget(maxAnswerBytes, batchSlots);
    const response = await fetchRequestHandler({
      endpoint: TRPC_PREFIX,
      // The body was read above: tRPC gets a request carrying the same text.
      req: text === null ? request : new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body: text,
      }),
      router,
      createContext: () => ({ ...ctx, answerBudget }),
      onError: ({ error }) => logFailure(error),
    });
    // A streamed batch (`trpc-accept: application/jsonl`) has begun: its calls past the limit
    // are answered 413 one by one. Otherwise the text tRPC built holds only what fitted.
    if (!answerBudget.exceeded || request.headers.get("trpc-accept") === "application/jsonl") {
      return response;
    }
    await response.body?.cancel();
    return trpcError(apiError("response_too_large"));
  }

  const labels = routeLabels(document);

  async function route(
    request: Request,
    url: URL,
    seen: Seen,
    client?: Client,
  ): Promise<Response> {
    const path = url.pathname;
    if (path === "/healthz" && request.method === "GET") {
      seen.route = path;
      return json(200, { status: "ok" });
    }
    if (path === "/readyz" && request.method === "GET") {
      seen.route = path;
      try {
        await sql`select 1`.execute(db);
        return json(200, { status: "ready" });
      } catch {
        return json(503, { status: "unavailable" });
      }
    }

    // The OpenAPI document and the reference page need no key.
    const documentation = await docs(request, path);
    if (documentation) {
      seen.route = labels.docs(path);
      return documentation;
    }
    for (const page of pages) {
      const answer = await page(request, url);
      if (answer) {
        seen.route = labels.page(path);
        return answer;
      }
    }

    const isRest = under(path, REST_PREFIX);
    const isTrpc = !isRest && under(path, TRPC_PREFIX);
    const endpoint = isRest || isTrpc ? undefined : keyed.find((e) => e.path === path);
    if (!isRest && !isTrpc && !endpoint) return restError(apiError("not_found"));
    if (isTrpc) seen.route = labels.trpc(path, url);
    else if (endpoint) seen.route = endpoint.path;
    // REST routes are matched after the key check; a refusal before it matches here.
    const refuse = isTrpc ? trpcError : (error: ApiError) => {
      if (isRest) seen.route = labels.rest(request.method, path);
      return restError(error);
    };

    const limited = (retryAfterSeconds: number) => {
      const response = refuse(apiError("rate_limited"));
      response.headers.set("retry-after", String(retryAfterSeconds));
      return response;
    };
    const key = presentedKey(request.headers);
    // The key's scope is decided here, once; the procedures' middleware enforces it.
    const scope = checkKey(key);
    if (!scope) {
      const address = clientAddress(client?.address, request.headers);
      const failures = authFailureLimiter?.take(address);
      if (failures && !failures.ok) {
        metrics?.refused("auth_failures");
        return limited(failures.retryAfterSeconds);
      }
      return refuse(apiError("unauthorized"));
    }
    seen.keyed = true;
    let calls = 1;
    if (isTrpc && url.searchParams.has("batch")) {
      calls = path.slice(TRPC_PREFIX.length + 1).split(",").length;
      if (calls > MAX_TRPC_BATCH) {
        return refuse(apiError("bad_request", `A batch holds at most ${MAX_TRPC_BATCH} calls`));
      }
    }
    const admission = rateLimiter?.take(key!, calls);
    if (admission && !admission.ok) {
      metrics?.refused("key");
      return limited(admission.retryAfterSeconds);
    }
    if (endpoint) return await endpoint.handle(request, url, scope);
    const ctx = createContext({
      db,
      authenticated: true,
      scope,
      services,
      chargeKey: rateLimiter ? (cost) => rateLimiter.charge(key!, cost) : undefined,
    });
    if (isTrpc) return await trpc(request, url, path, ctx);

    const result = await rest({ request, url, path: path.slice(REST_PREFIX.length) || "/", ctx });
    seen.route = result.route ? REST_PREFIX + result.route : OTHER_ROUTE;
    if (result.failure) logFailure(result.failure.error, result.failure.answer);
    return ours(result.body, result.status);
  }

  return async (request, client) => {
    const started = performance.now();
    const url = new URL(request.url);
    const seen: Seen = { route: OTHER_ROUTE, keyed: false };
    let response: Response;
    try {
      response = cors?.preflight(request) ?? await route(request, url, seen, client);
    } catch (error) {
      log.error("request failed", errorFields(error));
      response = restError(apiError("internal"));
    }
    if (!response.headers.has("x-content-type-options")) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
        response.headers.set(name, value);
      }
    }
    cors?.decorate(request, response.headers);
    const method = LOGGED_METHODS.has(request.method) ? request.method : "OTHER";
    const ms = performance.now() - started;
    metrics?.request(seen.route, method, response.status, ms / 1000);
    if (!seen.keyed) {
      // Anyone can send these, as fast as they like: counted, never a line each.
      summary.count(seen.route, method, response.status);
      return response;
    }
    summary.tick();
    const path = url.pathname;
    log.info("request", {
      method,
      path: path.length > LOGGED_PATH_LENGTH ? `${path.slice(0, LOGGED_PATH_LENGTH)}…` : path,
      status: response.status,
      duration_ms: Math.round(ms * 100) / 100,
    });
    return response;
  };
}

/** What routing learnt of a request, for the metrics and the log. */
interface Seen {
  /** Its route template (a bounded label). */
  route: string;
  /** Whether it carried a valid key to the API: logged a line each; the rest are counted. */
  keyed: boolean;
}

/** The route label of a request no route of ours answered (and of CORS preflights). */
const OTHER_ROUTE = "other";

/**
 * Route labels for metrics, bounded whatever callers send: REST templates from the document,
 * `/trpc/<procedure>` for the document's procedures, and a label per public page.
 */
function routeLabels(document: OpenAPIObject) {
  const routes = routesOf(document);
  const procedures = new Set(procedureTypes(document).keys());
  return {
    rest(method: string, path: string): string {
      const match = matchRoute(routes, method, path.slice(REST_PREFIX.length) || "/");
      return match ? REST_PREFIX + match.route.template : OTHER_ROUTE;
    },
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
