import type { AnyRouter } from "@trpc/server";
import { createOpenApiNodeHttpHandler } from "trpc-to-openapi";
import { type ApiError, apiError, toApiError } from "../errors.ts";
import type { Context } from "../trpc/context.ts";
import { requestWithParsedBody } from "../http/request_stand_in.ts";
import { createRestRoutes } from "./routes.ts";
import { pinCoercion } from "../trpc/pin_coercion.ts";

/** Paths under which these names are path parameters; a body may not name them again. */
const PATH_PARAMS = ["project", "probeId"];

interface Exchange {
  ctx: Context;
  error?: unknown;
}

interface ResponseSink {
  statusCode: number;
  setHeader(name: string, value: string | string[]): void;
  end(body?: string): void;
}

export interface RestCall {
  request: Request;
  /** The request's URL, when the caller has parsed it already. */
  url?: URL;
  /** The request path below the REST prefix, for example `/projects/a`. */
  path: string;
  /** The parsed JSON body, for methods that carry one. */
  body?: unknown;
  ctx: Context;
}

export interface RestResult {
  status: number;
  /** JSON text, or null for an answer without a body. */
  body: string | null;
  /** The failure behind a non-2xx answer, for the log. */
  error?: unknown;
}

/**
 * Serves the router's OpenAPI procedures as REST. The bridge's handler and its procedure table
 * are built once here; its fetch adapter would build both again on every request. Routes the
 * bridge would pass through unchanged are dispatched directly (`rest_routes.ts`); the bridge
 * answers the rest. Bodies arrive already read and parsed, and every failure is answered through
 * `toApiError`.
 */
export function createRestHandler(
  router: AnyRouter,
  { direct: dispatchDirectly = true }: { direct?: boolean } = {},
): (call: RestCall) => Promise<RestResult> {
  pinCoercion(router);
  const exchanges = new WeakMap<object, Exchange>();
  const handle = createOpenApiNodeHttpHandler({
    router,
    createContext: ({ req }: { req: object }) => exchanges.get(req)!.ctx,
    onError: ({ error, req }: { error: unknown; req: object }) => {
      exchanges.get(req)!.error = error;
    },
    // deno-lint-ignore no-explicit-any
  } as any) as (req: unknown, res: ResponseSink) => Promise<void>;

  const direct = createRestRoutes(router);

  return async ({ request, url = new URL(request.url), path, body, ctx }) => {
    const clash = pathParamClash(path, body);
    if (clash) return errorResult(clash);
    const dispatched = dispatchDirectly
      ? await direct({
        method: request.method,
        path,
        url,
        contentType: request.headers.get("content-type"),
        body,
        ctx,
      })
      : { handled: false as const };
    if (dispatched.handled) {
      if (!dispatched.ok) {
        return { ...errorResult(toApiError(dispatched.error)), error: dispatched.error };
      }
      const status = ctx.res.status ?? 200;
      return { status, body: status === 204 ? null : JSON.stringify(dispatched.data) ?? null };
    }
    const exchange: Exchange = { ctx };
    const req = requestWithParsedBody(request, `${url.origin}${path}${url.search}`, body);
    exchanges.set(req, exchange);
    const text = await new Promise<string | undefined>((resolve) => {
      const sink: ResponseSink = { statusCode: 200, setHeader: () => {}, end: resolve };
      handle(req, sink);
    });
    if (exchange.error !== undefined) {
      return { ...errorResult(toApiError(exchange.error)), error: exchange.error };
    }
    const status = ctx.res.status ?? 200;
    return { status, body: status === 204 ? null : text ?? null };
  };
}

function errorResult({ status, body }: ApiError): RestResult {
  return { status, body: JSON.stringify(body) };
}

function pathParamClash(path: string, body: unknown): ApiError | null {
  if (!path.startsWith("/projects/") || typeof body !== "object" || body === null) return null;
  const names = PATH_PARAMS.filter((name) => Object.hasOwn(body, name));
  if (names.length === 0) return null;
  return apiError(
    422,
    "validation_failed",
    "Validation failed",
    names.map((name) => ({
      path: name,
      message: "is given by the path and must not be sent in the body",
    })),
  );
}
