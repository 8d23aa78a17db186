/**
 * `/trpc/*` once the key is checked: the input read within the limits and parsed once, then the
 * fast path (`server/procedures/fast_path.ts`) or tRPC's own `fetchRequestHandler`, with the batch
 * answer budget (`server/procedures/answer_size.ts`).
 *
 * @module
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { apiError, retryAfterOfAll, toApiError } from "../procedures/errors.ts";
import type { Context } from "../procedures/context.ts";
import type { FastPath } from "../procedures/fast_path.ts";
import type { AppRouter } from "../procedures/router.ts";
import { trpcError } from "./answers.ts";
import { AnswerBudget, BATCH_CALLS_AT_ONCE, Slots } from "../procedures/answer_size.ts";
import { parseJson, readBodyText } from "./body.ts";

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

export interface TrpcCall {
  request: Request;
  url: URL;
  /** The procedure path, or the batch's paths joined by `,`: the request path less `/trpc/`. */
  procedure: string;
  ctx: Context;
}

export function createTrpcEndpoint(
  { router, endpoint, fastPath, onError, maxAnswerBytes }: {
    router: AppRouter;
    /** The path prefix, `/trpc`. */
    endpoint: string;
    /** Answers the plain calls (`server/procedures/fast_path.ts`); null passes one on to tRPC. */
    fastPath: FastPath;
    /** Told of a failure, and its request's context. */
    onError: (error: unknown, ctx: Context) => void;
    maxAnswerBytes: number;
  },
): (call: TrpcCall) => Promise<Response> {
  // Shared by every batch: big batches at once wait for each other, not ahead of other callers.
  const batchSlots = new Slots(BATCH_CALLS_AT_ONCE);
  return async ({ request, url, procedure, ctx }) => {
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
    const fast = await fastPath({ request, url, path: procedure, input, ctx });
    if (fast) return fast;
    // Batches (and whatever else tRPC's handler answers) count their queries' results as they
    // resolve: past the limit the calls left are not made, and the batch is answered 413 whole.
    const answerBudget = new AnswerBudget(maxAnswerBytes, batchSlots);
    const response = await fetchRequestHandler({
      endpoint,
      // The body was read above: tRPC gets a request carrying the same text.
      req: text === null ? request : new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body: text,
      }),
      router,
      createContext: () => ({ ...ctx, answerBudget }),
      onError: ({ error }) => onError(error, ctx),
      // A call refused by a bound of its own (a location's open claims) says when to come back.
      responseMeta: ({ errors }) => ({ headers: retryAfterOfAll(errors.map(toApiError)) }),
    });
    // A streamed batch (`trpc-accept: application/jsonl`) has begun: its calls past the limit
    // are answered 413 one by one. Otherwise the text tRPC built holds only what fitted.
    if (!answerBudget.exceeded || request.headers.get("trpc-accept") === "application/jsonl") {
      return response;
    }
    await response.body?.cancel();
    return trpcError(apiError("response_too_large"));
  };
}
