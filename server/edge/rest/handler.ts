/**
 * Serves the router's procedures as REST, at the paths their meta declares: one handler per
 * operation, each registered as a route of the edge's router (`server/edge/router.ts`, which
 * dispatches). A request's input is gathered (path parameters over the documented query
 * parameters, or over the JSON body), and the procedure called through tRPC's public caller, so
 * input and output validation always run. Values are passed as they were sent: nothing is
 * coerced, so `"enabled": "false"` in a body stays a string and fails validation. Every failure
 * is answered through the error contract (`server/procedures/errors.ts`).
 *
 * @module
 */
import { type ApiError, apiError, toApiError } from "../../procedures/errors.ts";
import { boundedStringify, DEFAULT_MAX_ANSWER_BYTES } from "../../procedures/answer_size.ts";
import { readJsonObject } from "../body.ts";
import type { Context } from "../../procedures/context.ts";
import { createProcedureCaller } from "../../procedures/caller.ts";
import { OPERATIONS } from "../../procedures/operations.ts";
import { streamList } from "../../procedures/pages.ts";
import type { AppRouter } from "../../procedures/router.ts";
import { paramsReader, type Route, routesOf } from "./routes.ts";

export interface RestCall {
  request: Request;
  url: URL;
  /** The request path below the REST prefix, for example `/projects/a`. */
  path: string;
  ctx: Context;
}

export interface RestResult {
  status: number;
  /** JSON text, a stream of it (a whole paged list), or null for an answer without a body. */
  body: string | ReadableStream<Uint8Array> | null;
  /** The failure behind a non-2xx answer, for the log. */
  failure?: { error: unknown; answer: ApiError };
}

/** An operation's route, and what answers a request the router sent it. */
export interface RestOperation {
  route: Route;
  answer: (call: RestCall) => Promise<RestResult>;
}

/** Builds the handlers of the REST operations of `router`'s procedures. */
export function createRestOperations(
  { router, onError, maxAnswerBytes = DEFAULT_MAX_ANSWER_BYTES }: {
    router: AppRouter;
    /** Told of a failure after a streamed answer began (its status was sent), and its call's context. */
    onError: (error: unknown, ctx: Context) => void;
    /**
     * The most characters of JSON a read's answer may build; past it 413
     * (`server/procedures/answer_size.ts`).
     */
    maxAnswerBytes?: number;
  },
): RestOperation[] {
  const call = createProcedureCaller(router);
  return [...routesOf(OPERATIONS).values()].flat().map((route) => {
    const paramsOf = paramsReader(route);
    return {
      route,
      answer: ({ request, url, path, ctx }) => answer(route, paramsOf(path), request, url, ctx),
    };
  });

  async function answer(
    route: Route,
    params: Record<string, string>,
    request: Request,
    url: URL,
    ctx: Context,
  ): Promise<RestResult> {
    let input: Record<string, unknown>;
    if (route.body === "none") {
      input = { ...queryInput(url, route), ...params };
    } else {
      // An action that takes no input has an optional body in the document: no body or `{}`;
      // anything else reaches the procedure's strict input and is a 422.
      const read = await readJsonObject(request, { optional: route.body === "optional" });
      if (!read.ok) return answerError(read.error);
      const clash = pathParamClash(route, read.value);
      if (clash) return answerError(clash);
      input = { ...read.value, ...params };
    }
    try {
      if (route.paged && input.limit === undefined) {
        const body = await streamList({
          call,
          ctx,
          path: route.procedure,
          input,
          onError: (error) => onError(error, ctx),
        });
        return { status: 200, body };
      }
      // A read's lists stop reading once past the limit (`listMeter`).
      if (route.method === "GET") ctx.answerLimit = maxAnswerBytes;
      const data = await call(ctx, route.procedure, input);
      const status = ctx.res.status ?? route.success[0];
      if (!route.success.includes(status)) {
        throw new Error(`${route.method} ${route.template} answered ${status}, not declared`);
      }
      if (status === 204) return { status, body: null };
      // A read's answer is given up as soon as it passes the limit, before it is built whole; a
      // write's is bounded by its input, and is never refused once the write is done.
      if (route.method !== "GET") return { status, body: JSON.stringify(data) ?? null };
      const text = boundedStringify(data, maxAnswerBytes);
      if (text === null) return answerError(apiError("response_too_large"));
      return { status, body: text ?? null };
    } catch (error) {
      return answerError(toApiError(error), error);
    }
  }
}

function answerError(answer: ApiError, error: unknown = answer): RestResult {
  return { status: answer.status, body: JSON.stringify(answer.body), failure: { error, answer } };
}

/** The documented query parameters: one value as a string, a repeated one as an array. */
function queryInput(url: URL, route: Route): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const name of route.queryParams) {
    const values = url.searchParams.getAll(name);
    if (values.length > 0) query[name] = values.length === 1 ? values[0] : values;
  }
  return query;
}

/** A body may not name a path parameter again: the path names it. */
function pathParamClash(route: Route, body: object | undefined): ApiError | null {
  if (!body) return null;
  const names = route.pathParams.filter((name) => Object.hasOwn(body, name));
  if (names.length === 0) return null;
  return apiError(
    "validation_failed",
    undefined,
    names.map((name) => ({
      path: name,
      message: "is given by the path and must not be sent in the body",
    })),
  );
}
