/**
 * The common `/trpc` call answered without tRPC's generic HTTP resolver: one query by GET or one
 * mutation by POST, JSON input, no batching, JSON answer (`trpc-accept` absent or
 * `application/json`). The procedure is called through tRPC's public caller (middlewares, input
 * and output validation all run), and the answer is the one `fetchRequestHandler` gives, byte
 * for byte and header for header: `{"result":{"data":…}}`, or `{"error":…}` in the shape of the
 * router's error formatter with its HTTP status (`fast_path_test.ts` compares the two for every
 * procedure, and the service's `/trpc` with and without this path). Anything else returns null
 * and goes to `fetchRequestHandler`.
 *
 * One such call is answered here whatever `procedures` says: a paged list asked for without
 * `limit` is streamed whole (`pages.ts`), as on REST, where tRPC's handler would refuse a list
 * past 1,000 items. So `/trpc` answers it the same with the fast path off.
 *
 * Which procedures are queries, and which lists are paged, comes from the procedures themselves
 * (`OPERATIONS` in `operations.ts`), not from the OpenAPI document.
 *
 * @module
 */
import { AnswerTooLargeError, retryAfterOf, toApiError, trpcErrorShape } from "./errors.ts";
import { boundedStringify, DEFAULT_MAX_ANSWER_BYTES } from "./answer_size.ts";
import type { Context } from "./context.ts";
import { createProcedureCaller } from "./caller.ts";
import { OPERATIONS } from "./operations.ts";
import { STREAMED, streamList } from "./pages.ts";
import type { AppRouter } from "./router.ts";

/** The headers of tRPC's handler's JSON answers. */
const HEADERS = { "content-type": "application/json", vary: "trpc-accept, accept" };

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

/**
 * Whether `fetchRequestHandler` would take this as one call of a procedure of `type`, with JSON
 * input, answered as one JSON text.
 */
function isPlainCall(request: Request, url: URL, type: string | undefined): boolean {
  const plain = type === "query"
    ? request.method === "GET" && (!request.headers.has("content-type") || isJson(request))
    : type === "mutation" && request.method === "POST" && isJson(request);
  const accept = request.headers.get("trpc-accept");
  return plain && !url.searchParams.has("batch") && !url.searchParams.has("connectionParams") &&
    (accept === null || accept === "application/json");
}

export function createTrpcFastPath(
  {
    router,
    onError,
    headers: extra = {},
    maxAnswerBytes = DEFAULT_MAX_ANSWER_BYTES,
    procedures = true,
  }: {
    router: AppRouter;
    /** Told of a failure, and its call's context. */
    onError: (error: unknown, ctx: Context) => void;
    /** Headers to add to every answer (the HTTP layer's own). */
    headers?: Record<string, string>;
    /**
     * The most characters of JSON a query's answer may build; past it 413
     * (`server/procedures/answer_size.ts`).
     */
    maxAnswerBytes?: number;
    /**
     * Whether calls other than streamed lists are answered here (true by default); when false,
     * they all go to tRPC's handler (for tests and benchmarks comparing the two paths).
     */
    procedures?: boolean;
  },
): FastPath {
  const headers = { ...HEADERS, ...extra };
  const streamHeaders = { ...headers, ...STREAMED };
  const types = new Map(OPERATIONS.map((o) => [o.procedure.join("."), o.type]));
  const paged = new Set(OPERATIONS.filter((o) => o.paged).map((o) => o.procedure.join(".")));
  const call = createProcedureCaller(router);
  return async ({ request, url, path, input, ctx }) => {
    const type = types.get(path);
    if (!isPlainCall(request, url, type)) return null;
    // No input at all is an empty one to a list's schema.
    const list = input === undefined ? {} : input;
    const streamed = paged.has(path) && isObject(list) && list.limit === undefined;
    if (!streamed && !procedures) return null;
    let json;
    let status = 200;
    let answerHeaders = headers;
    try {
      if (streamed) {
        const body = await streamList({
          call,
          ctx,
          path: path.split("."),
          input: list,
          prefix: `{"result":{"data":`,
          suffix: "}}",
          onError: (error) => onError(error, ctx),
        });
        return new Response(body, { status, headers: streamHeaders });
      }
      // A read's lists stop reading once past the limit (`listMeter`).
      if (type === "query") ctx.answerLimit = maxAnswerBytes;
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
      answerHeaders = { ...headers, ...retryAfterOf(answer) };
    }
    return new Response(JSON.stringify(json), { status, headers: answerHeaders });
  };
}
