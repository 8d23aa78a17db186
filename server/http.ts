import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { sql } from "kysely";
import type { Db } from "./db/database.ts";
import { readBodyText, readJsonObject } from "./body.ts";
import { createDocsHandler } from "./docs.ts";
import { type ApiError, apiError, isUnexpected } from "./errors.ts";
import { errorFields, type Logger } from "./log.ts";
import { openApiJson } from "./openapi.ts";
import { createRestHandler } from "./rest.ts";
import type { IamAliveControl } from "./iam_alive/reporter.ts";
import { createContext } from "./trpc/context.ts";
import { appRouter } from "./trpc/router.ts";

export const REST_PREFIX = "/api/v1";
export const TRPC_PREFIX = "/trpc";
export const API_KEY_HEADER = "x-service-api-key";

export interface HttpDeps {
  db: Db;
  checkKey: (presented: string | null) => boolean;
  log: Logger;
  iamAlive?: IamAliveControl;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);
const SECURITY_HEADERS = { "x-content-type-options": "nosniff", "cache-control": "no-store" };

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

const errorResponse = ({ status, body }: ApiError) => json(status, body);

const unauthorized = () =>
  apiError(401, "unauthorized", "A valid X-Service-Api-Key header is required");

/** tRPC clients read errors in tRPC's own shape; ours rides along under `data.error`. */
function trpcErrorResponse({ status, body }: ApiError): Response {
  return json(status, {
    error: {
      message: body.error.message,
      code: -32001,
      data: { code: "UNAUTHORIZED", httpStatus: status, error: body.error },
    },
  });
}

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The service's one request handler: health checks, then the API key, then `/api/v1` (REST
 * through the OpenAPI bridge) or `/trpc`. One log line per request; errors answered in one shape.
 */
export function createHttpHandler(
  { db, checkKey, log, iamAlive }: HttpDeps,
): (request: Request) => Promise<Response> {
  const rest = createRestHandler(appRouter);
  const docs = createDocsHandler({
    openApiJson: openApiJson(appRouter, REST_PREFIX),
    openApiPath: `${REST_PREFIX}/openapi.json`,
  });

  const logFailure = (error: unknown) => {
    if (isUnexpected(error)) log.error("request failed", errorFields(error));
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

    const authenticated = checkKey(request.headers.get(API_KEY_HEADER));
    if (!authenticated) {
      return isRest ? errorResponse(unauthorized()) : trpcErrorResponse(unauthorized());
    }
    const ctx = createContext({ db, authenticated, iamAlive });

    if (isTrpc) {
      let req = request;
      if (BODY_METHODS.has(request.method)) {
        const text = await readBodyText(request);
        if (!text.ok) return errorResponse(text.error);
        req = new Request(request.url, {
          method: request.method,
          headers: request.headers,
          body: text.value,
        });
      }
      return fetchRequestHandler({
        endpoint: TRPC_PREFIX,
        req,
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
    const result = await rest({ request, path: path.slice(REST_PREFIX.length) || "/", body, ctx });
    if (result.error !== undefined) logFailure(result.error);
    return new Response(result.body, {
      status: result.status,
      headers: result.body === null ? {} : { "content-type": "application/json" },
    });
  }

  return async (request) => {
    const started = performance.now();
    const url = new URL(request.url);
    let response: Response;
    try {
      response = await route(request, url);
    } catch (error) {
      log.error("request failed", errorFields(error));
      response = errorResponse(apiError(500, "internal", "Internal server error"));
    }
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
    log.info("request", {
      method: request.method,
      path: url.pathname,
      status: response.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
    });
    return response;
  };
}
