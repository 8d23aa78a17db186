/**
 * The answers the HTTP edge builds itself, and the one place its error answers are built: the
 * status and body of the error contract (`server/procedures/errors.ts`), as JSON, with the security headers
 * (`nosniff`, `no-store`). REST and the keyed endpoints answer the REST error body; `/trpc`
 * answers the same error in tRPC's shape (`trpcErrorShape`). The connection layer's own
 * refusals, made before a request exists (the cap, timeouts, 431), are its own
 * (`server/edge/serve.ts`).
 *
 * @module
 */
import { type ApiError, retryAfterOf, trpcErrorShape } from "../procedures/errors.ts";
import { STREAMED } from "../procedures/pages.ts";

/** Every answer of the edge carries these (added by the router's middleware when missing). */
export const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};
const JSON_HEADERS = { "content-type": "application/json", ...SECURITY_HEADERS };
const STREAMED_JSON_HEADERS = { ...JSON_HEADERS, ...STREAMED };

/** Only the content type: see `ours`. */
const CONTENT_TYPE_ONLY = { "content-type": "application/json" };

/**
 * Answers built here carry the security headers from the start. A 200 with a text body is
 * made with its content type alone and given the others after: Deno (2.9) makes a native copy of
 * any other text answer's headers for `Deno.serve`, which the connection layer (node:http) never
 * uses, and that copy costs twice what the whole answer costs otherwise (`bench:http`).
 */
export function ours(body: string | ReadableStream<Uint8Array> | null, status: number): Response {
  if (status === 200 && typeof body === "string") {
    const response = new Response(body, { status, headers: CONTENT_TYPE_ONLY });
    const headers = response.headers;
    for (const name in SECURITY_HEADERS) {
      headers.set(name, SECURITY_HEADERS[name as keyof typeof SECURITY_HEADERS]);
    }
    return response;
  }
  const headers = body === null
    ? SECURITY_HEADERS
    : typeof body === "string"
    ? JSON_HEADERS
    : STREAMED_JSON_HEADERS;
  return new Response(body, { status, headers });
}

/** `body` as JSON with `status`. */
export const json = (status: number, body: unknown): Response => ours(JSON.stringify(body), status);

/** The REST error answer: the contract's status and body (and `Retry-After` when it says). */
export const restError = (error: ApiError): Response =>
  withHeaders(json(error.status, error.body), retryAfterOf(error));

/** The `/trpc` error answer: the same error in the shape of tRPC's error formatter. */
export const trpcError = (error: ApiError): Response =>
  withHeaders(json(error.status, { error: trpcErrorShape(error) }), retryAfterOf(error));

function withHeaders(response: Response, headers: Record<string, string>): Response {
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

/**
 * The REST error answer for `error` (its status, the error body, the security headers), with
 * `headers` added: for keyed endpoints' own refusals.
 */
export function errorAnswer(error: ApiError, headers: Record<string, string> = {}): Response {
  return withHeaders(restError(error), headers);
}
