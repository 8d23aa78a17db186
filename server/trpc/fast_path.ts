/**
 * The common `/trpc` call answered without tRPC's generic HTTP resolver: one query by GET or one
 * mutation by POST, JSON input, no batching, no streaming. The procedure is called through
 * tRPC's public caller (middlewares, input and output validation all run), and the answer is the
 * one `fetchRequestHandler` gives, byte for byte: `{"result":{"data":…}}`, or `{"error":…}` in
 * the shape of the router's error formatter with its HTTP status (`fast_path_test.ts` compares
 * the two for every procedure). Anything else returns null and goes to `fetchRequestHandler`.
 *
 * Which procedures are queries, and which lists are paged, comes from the procedures themselves
 * (`operationsOf` in `operations.ts`), not from the OpenAPI document.
 *
 * @module
 */
import { toApiError, trpcErrorShape } from "../errors.ts";
import {
  AnswerTooLargeError,
  boundedStringify,
  DEFAULT_MAX_ANSWER_BYTES,
} from "../http/answer_size.ts";
import type { Context } from "./context.ts";
import { createProcedureCaller } from "./caller.ts";
import { type Operation, operationsOf } from "./operations.ts";
import { STREAMED, streamList } from "./pages.ts";
import type { AppRouter } from "./router.ts";

const HEADERS = { "content-type": "application/json", vary: "trpc-accept" };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export interface FastCall {
  request: Request;
  url: URL;
  /** The procedure path, such as `projects.get`. */
  path: string;
  /** The call's input, already parsed from `?input=` or the body; undefined when none. */
  input: unknown;
  ctx: Context;
}

export type FastPath = (call: FastCall) => Promise<Response | null>;

function isJson(request: Request): boolean {
  const type = request.headers.get("content-type")?.toLowerCase();
  return type?.split(";", 1)[0].trim() === "application/json";
}

export function createTrpcFastPath(
  {
    router,
    operations = operationsOf(router),
    onError,
    headers: extra = {},
    maxAnswerBytes = DEFAULT_MAX_ANSWER_BYTES,
  }: {
    router: AppRouter;
    /** The router's REST operations (`operationsOf`), when they are already at hand. */
    operations?: readonly Operation[];
    /** Told of a failure, and its call's context. */
    onError: (error: unknown, ctx: Context) => void;
    /** Headers to add to every answer (the HTTP layer's own). */
    headers?: Record<string, string>;
    /** The most characters of JSON a query's answer may build; past it 413 (`answer_size.ts`). */
    maxAnswerBytes?: number;
  },
): FastPath {
  const headers = { ...HEADERS, ...extra };
  const streamHeaders = { ...headers, ...STREAMED };
  const types = new Map(operations.map((o) => [o.procedure.join("."), o.type]));
  const paged = new Set(operations.filter((o) => o.paged).map((o) => o.procedure.join(".")));
  const call = createProcedureCaller(router);
  return async ({ request, url, path, input, ctx }) => {
    const type = types.get(path);
    const plain = type === "query"
      ? request.method === "GET" && (!request.headers.has("content-type") || isJson(request))
      : type === "mutation" && request.method === "POST" && isJson(request);
    if (
      !plain || url.searchParams.has("batch") || url.searchParams.has("connectionParams") ||
      request.headers.has("trpc-accept")
    ) {
      return null;
    }
    let json;
    let status = 200;
    try {
      if (paged.has(path) && isObject(input) && input.limit === undefined) {
        const body = await streamList({
          call,
          ctx,
          path: path.split("."),
          input,
          prefix: `{"result":{"data":`,
          suffix: "}}",
          onError: (error) => onError(error, ctx),
        });
        return new Response(body, { status, headers: streamHeaders });
      }
      json = { result: { data: await call(ctx, path.split("."), input) } };
      if (type === "query") {
        // Given up as soon as it passes the limit, before it is built whole (a mutation's answer
        // is bounded by its input, and is never refused once done).
        const text = boundedStringify(json, maxAnswerBytes);
        if (text === null) throw new AnswerTooLargeError(maxAnswerBytes);
        return new Response(text, { status, headers });
      }
    } catch (error) {
      onError(error, ctx);
      const answer = toApiError(error);
      json = { error: trpcErrorShape(answer) };
      status = answer.status;
    }
    return new Response(JSON.stringify(json), { status, headers });
  };
}
