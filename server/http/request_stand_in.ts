/**
 * Stand-ins for a `Request`, handed to the tRPC fetch adapter and to the REST bridge. They pass
 * `instanceof Request` and carry what those read, with two differences that matter per request:
 * the body is the one already read (no second copy of the request), and the signal is one that
 * never aborts. Deno builds an AbortError, stack trace and all, at the end of every request whose
 * own signal was read; nothing here cancels work on a disconnect, so nothing needs it.
 */

const NEVER_ABORTED = new AbortController().signal;

/** A request with the given URL and, optionally, an already parsed body (for the REST bridge). */
export function requestWithParsedBody(request: Request, url: string, body: unknown): Request {
  return {
    __proto__: Request.prototype,
    method: request.method,
    url,
    headers: request.headers,
    body,
    signal: NEVER_ABORTED,
  } as unknown as Request;
}

/** A request whose body is text already read (for the tRPC fetch adapter). */
export function requestWithText(request: Request, text: string | null): Request {
  const asResponse = () =>
    new Response(text, { headers: { "content-type": request.headers.get("content-type") ?? "" } });
  return {
    __proto__: Request.prototype,
    method: request.method,
    url: request.url,
    headers: request.headers,
    signal: NEVER_ABORTED,
    get body() {
      return text === null ? null : asResponse().body;
    },
    text: () => Promise.resolve(text ?? ""),
    json: () => asResponse().json(),
    formData: () => asResponse().formData(),
    arrayBuffer: () => asResponse().arrayBuffer(),
  } as unknown as Request;
}
