import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import { isDatabaseUnavailable } from "../db/unavailable.ts";
import { checkJsonLimits, readBodyText, readJsonObject } from "./body.ts";
import type { Cors } from "./cors.ts";
import { createDocsHandler } from "./docs.ts";
import { type ApiError, apiError, isUnavailable, isUnexpected } from "../errors.ts";
import { errorFields, type Logger } from "../log.ts";
import { openApiJson } from "./openapi.ts";
import type { RateLimiter } from "./rate_limit.ts";
import { requestWithText } from "./request_stand_in.ts";
import { createRestHandler } from "../rest/handler.ts";
import type { IamAliveControl } from "../iam_alive/reporter.ts";
import { createContext } from "../trpc/context.ts";
import { createTrpcFastPath } from "../trpc/fast_path.ts";
import { appRouter } from "../trpc/router.ts";

export const REST_PREFIX = "/api/v1";
export const TRPC_PREFIX = "/trpc";
export const API_KEY_HEADER = "x-service-api-key";

export interface HttpDeps {
  db: Db;
  checkKey: (presented: string | null) => boolean;
  log: Logger;
  iamAlive?: IamAliveControl;
  /** Per-key request limit; none when null or absent. */
  rateLimiter?: RateLimiter | null;
  /** CORS for listed origins; no CORS headers when null or absent. */
  cors?: Cors | null;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);
const SECURITY_HEADERS = { "x-content-type-options": "nosniff", "cache-control": "no-store" };
const JSON_HEADERS = { "content-type": "application/json", ...SECURITY_HEADERS };

/** Answers built here carry the security headers from the start (cheaper than adding them). */
function ours(body: BodyInit | null, status: number, withType: boolean): Response {
  return new Response(body, { status, headers: withType ? JSON_HEADERS : SECURITY_HEADERS });
}

function json(status: number, body: unknown): Response {
  return ours(JSON.stringify(body), status, true);
}

const errorResponse = ({ status, body }: ApiError) => json(status, body);

const unauthorized = () =>
  apiError(401, "unauthorized", "A valid X-Service-Api-Key header is required");

const tooManyRequests = () => apiError(429, "rate_limited", "Too many requests");

/** The tRPC error codes of the answers this file gives on tRPC's behalf. */
const TRPC_CODES: Record<number, [string, number]> = {
  401: ["UNAUTHORIZED", -32001],
  422: ["UNPROCESSABLE_CONTENT", -32022],
  429: ["TOO_MANY_REQUESTS", -32029],
};

/** tRPC clients read errors in tRPC's own shape; ours rides along under `data.error`. */
function trpcErrorResponse({ status, body }: ApiError): Response {
  const [code, number] = TRPC_CODES[status];
  return json(status, {
    error: {
      message: body.error.message,
      code: number,
      data: { code, httpStatus: status, error: body.error },
    },
  });
}

/** The JSON a tRPC request carries (its body, or its `input` query parameter), over the limits. */
function trpcJsonTooComplex(text: string | null): ApiError | null {
  if (!text) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null; // tRPC answers malformed JSON itself
  }
  return checkJsonLimits(value);
}

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The service's one request handler: health checks, then the API key, then `/api/v1` (REST
 * through the OpenAPI bridge) or `/trpc`. One log line per request; errors answered in one shape.
 */
export function createHttpHandler(
  { db, checkKey, log, iamAlive, rateLimiter, cors }: HttpDeps,
): (request: Request) => Promise<Response> {
  const rest = createRestHandler(appRouter);
  const trpcFastPath = createTrpcFastPath(appRouter, {
    onError: (error) => logFailure(error),
    headers: SECURITY_HEADERS,
  });
  const docs = createDocsHandler({
    openApiJson: openApiJson(appRouter, REST_PREFIX),
    openApiPath: `${REST_PREFIX}/openapi.json`,
  });

  const logFailure = (error: unknown) => {
    if (isUnavailable(error)) {
      // Expected while the database is down: one line without a stack.
      const what = isDatabaseUnavailable(error) ? "database unavailable" : "unavailable";
      log.warn(what, { error: errorFields(error).error });
    } else if (isUnexpected(error)) log.error("request failed", errorFields(error));
  };

  async function route(request: Request, url: URL): Promise<Response> {
    const path = url.pathname;
    if (path === "/healthz" && request.method === "GET") return json(200, { status: "ok" });
    if (path === "/readyz" && request.method === "GET") {
      try {
        await sql`select 1`.execute(db);
        return json(200, { status: "ready" });
      } catch {
        return json(503, { status: "unavailable" });
      }
    }

    // The OpenAPI document and the reference page need no key.
    const documentation = await docs(request, path);
    if (documentation) return documentation;

    const isRest = under(path, REST_PREFIX);
    const isTrpc = !isRest && under(path, TRPC_PREFIX);
    if (!isRest && !isTrpc) return errorResponse(apiError(404, "not_found", "No such route"));

    const key = request.headers.get(API_KEY_HEADER);
    const authenticated = checkKey(key);
    if (!authenticated) {
      return isRest ? errorResponse(unauthorized()) : trpcErrorResponse(unauthorized());
    }
    const admission = rateLimiter?.take(key!);
    if (admission && !admission.ok) {
      const response = isRest
        ? errorResponse(tooManyRequests())
        : trpcErrorResponse(tooManyRequests());
      response.headers.set("retry-after", String(admission.retryAfterSeconds));
      return response;
    }
    const ctx = createContext({ db, authenticated, iamAlive });

    if (isTrpc) {
      const inputTooComplex = trpcJsonTooComplex(url.searchParams.get("input"));
      if (inputTooComplex) return trpcErrorResponse(inputTooComplex);
      let text: string | null = null;
      if (BODY_METHODS.has(request.method)) {
        const read = await readBodyText(request);
        if (!read.ok) return errorResponse(read.error);
        const tooComplex = trpcJsonTooComplex(read.value);
        if (tooComplex) return trpcErrorResponse(tooComplex);
        text = read.value;
      }
      const procedurePath = path.slice(TRPC_PREFIX.length + 1);
      if (!procedurePath.includes("%")) {
        const fast = await trpcFastPath({ request, url, path: procedurePath, text, ctx });
        if (fast) return fast;
      }
      return fetchRequestHandler({
        endpoint: TRPC_PREFIX,
        req: requestWithText(request, text),
        router: appRouter,
        createContext: () => ctx,
        onError: ({ error }) => logFailure(error),
      });
    }

    let body: unknown;
    if (BODY_METHODS.has(request.method)) {
      const parsed = await readJsonObject(request);
      if (!parsed.ok) return errorResponse(parsed.error);
      body = parsed.value;
    }
    const result = await rest({
      request,
      url,
      path: path.slice(REST_PREFIX.length) || "/",
      body,
      ctx,
    });
    if (result.error !== undefined) logFailure(result.error);
    return ours(result.body, result.status, result.body !== null);
  }

  return async (request) => {
    const started = performance.now();
    const url = new URL(request.url);
    let response: Response;
    try {
      response = cors?.preflight(request) ?? await route(request, url);
    } catch (error) {
      log.error("request failed", errorFields(error));
      response = errorResponse(apiError(500, "internal", "Internal server error"));
    }
    if (!response.headers.has("x-content-type-options")) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
        response.headers.set(name, value);
      }
    }
    cors?.decorate(request, response.headers);
    log.info("request", {
      method: request.method,
      path: url.pathname,
      status: response.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
    });
    return response;
  };
}
