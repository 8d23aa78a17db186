/**
 * The connection layer's request conversion (`serve.ts`): node:http's request into a standard
 * `Request` (its body streamed, with backpressure and the body deadline), and the handler's
 * `Response` back out: in one piece with a Content-Length, or chunk by chunk when it declares
 * itself a stream (`Transfer-Encoding: chunked`, `text/event-stream`).
 *
 * @module
 */
import type http from "node:http";
import type { Buffer } from "node:buffer";
import {
  type BodyRead,
  type Conn,
  type ConnectionTable,
  RequestBodyError,
} from "./serve_connections.ts";
import { BodilessRequest, headerPairs } from "./serve_request.ts";

/**
 * Methods whose bodiless requests get a `BodilessRequest` (node:http gives them in upper case,
 * and `Request` takes them as they are); any other goes through `new Request`, which refuses
 * CONNECT, TRACE and TRACK.
 */
const BODILESS_METHODS = new Set(["GET", "HEAD", "DELETE", "OPTIONS"]);

/** A Host header we build URLs from; anything else is replaced by the listening address. */
const HOST_HEADER = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The `Request` for `req`, its URL on `hostForUrl` unless the Host header is a plain host;
 * throws for a request target that is neither a path nor an absolute http(s) URL.
 */
export function toRequest(
  req: http.IncomingMessage,
  conn: Conn,
  table: ConnectionTable,
  hostForUrl: string,
): Request {
  const target = req.url ?? "";
  const host = req.headers.host;
  let url: string;
  if (target.startsWith("/")) {
    url = `http://${host && HOST_HEADER.test(host) ? host : hostForUrl}${target}`;
  } else if (/^https?:\/\//i.test(target)) url = target;
  else throw new TypeError("Unsupported request target");
  const raw = req.rawHeaders;
  const method = req.method ?? "GET";
  // As with Deno.serve, a request without a body has `body` null.
  const hasBody = req.headers["transfer-encoding"] !== undefined ||
    Number(req.headers["content-length"] ?? 0) > 0;
  if (!hasBody && BODILESS_METHODS.has(method)) {
    // What `new Request` would refuse is refused here too.
    if (!URL.canParse(url)) throw new TypeError("Invalid URL");
    return new BodilessRequest(url, method, raw);
  }
  const headers = headerPairs(raw);
  if (!hasBody) return new Request(url, { method, headers });
  return new Request(
    url,
    { method, headers, body: bodyOf(req, conn, table), duplex: "half" } as
      & RequestInit
      & { duplex: "half" },
  );
}

/** The request's body as a stream, with backpressure and the body deadline. */
function bodyOf(
  req: http.IncomingMessage,
  conn: Conn,
  table: ConnectionTable,
): ReadableStream<Uint8Array> {
  const bodies = table.bodies;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let done = false;
  const ended = Promise.withResolvers<boolean>();
  const read: BodyRead = {
    conn,
    deadline: performance.now() + table.limits.bodyTimeoutMs,
    fail(error) {
      if (done) return;
      done = true;
      bodies.delete(read);
      controller.error(error);
    },
    drain(ms) {
      if (!done) {
        done = true;
        controller.error(new RequestBodyError("aborted", "The answer was given before the body"));
      }
      dropRest();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<boolean>((resolve) => timer = setTimeout(resolve, ms, false));
      return Promise.race([ended.promise, late]).finally(() => clearTimeout(timer));
    },
  };
  bodies.add(read);
  table.readOf.set(req, read);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    pull() {
      req.resume();
    },
    cancel() {
      done = true;
      dropRest(); // the deadline still holds
    },
  }, { highWaterMark: 65536, size: (chunk) => chunk.byteLength });
  /** What is left of the body is read and dropped. */
  const dropRest = () => {
    req.off("data", onData);
    req.resume();
  };
  const onData = (chunk: Buffer) => {
    if (done) return;
    controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  };
  req.on("data", onData);
  req.once("end", () => {
    bodies.delete(read);
    ended.resolve(true);
    if (done) return;
    done = true;
    controller.close();
  });
  req.once("close", () => {
    bodies.delete(read);
    ended.resolve(req.complete);
    if (!req.complete) {
      read.fail(new RequestBodyError("aborted", "The client closed the connection mid-body"));
    }
  });
  return stream;
}

/** The status, the headers in node's flat form, and whether the body is sized or streamed. */
function headersOf(response: Response) {
  const headers: string[] = [];
  let streamed = false;
  let sized = false;
  let cookies = false;
  response.headers.forEach((value, name) => {
    if (name === "set-cookie") cookies = true;
    else {
      if (name === "content-length") sized = true;
      else if (name === "transfer-encoding") streamed = true;
      else if (name === "content-type") streamed ||= value.startsWith("text/event-stream");
      headers.push(name, value);
    }
  });
  if (cookies) {
    for (const cookie of response.headers.getSetCookie()) headers.push("set-cookie", cookie);
  }
  return { headers, streamed, sized };
}

/** The longest a request's unread body is read and dropped for before its answer is sent. */
export const LINGER_MS = 1000;
/** The largest declared body read that way; a larger one ends its connection at once. */
export const LINGER_BYTES = 8 * 1024 * 1024;

/** Whether the rest of `req`'s body is read before the answer: a declared length, small enough. */
function lingers(req: http.IncomingMessage): boolean {
  const length = Number(req.headers["content-length"]);
  return Number.isSafeInteger(length) && length <= LINGER_BYTES;
}

/** Sends `response` as the answer to `req`; `keepAlive` is the Keep-Alive header's value. */
export async function send(
  response: Response,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  table: ConnectionTable,
  keepAlive: string,
): Promise<void> {
  // `response.body` is not touched unless streaming: for a body given as text, the getter
  // builds a stream, and costs more than reading the body whole with `bytes()`.
  if (res.destroyed) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  const status = response.status;
  const { headers, streamed, sized } = headersOf(response);
  // A request whose body was not read in full ends its connection, and so does every request
  // while shutting down. A small rest still arriving is read first, for a moment: closing with
  // bytes unread resets the connection, and a client still sending would get the reset instead
  // of this answer. Once read, the connection stays open.
  const read = table.readOf.get(req);
  if (read && table.bodies.has(read) && !table.draining && lingers(req)) {
    // Within the body's deadline, whose sweep would close the connection unanswered.
    await read.drain(Math.min(LINGER_MS, (read.deadline - performance.now()) / 2));
    if (res.destroyed) {
      await response.body?.cancel().catch(() => {});
      return;
    }
  }
  if (table.draining || (read && table.bodies.has(read))) headers.push("connection", "close");
  else headers.push("keep-alive", keepAlive); // clients that heed it stop reusing in time
  if (status === 204 || status === 304 || (streamed && req.method === "HEAD")) {
    res.writeHead(status, headers).end();
    if (streamed) await response.body?.cancel().catch(() => {});
    return;
  }
  if (!streamed) {
    // One piece with its length (node sends no body for HEAD).
    const bytes = await response.bytes();
    if (res.destroyed) return;
    if (!sized) headers.push("content-length", String(bytes.byteLength));
    res.writeHead(status, headers).end(bytes);
    return;
  }
  const reader = response.body!.getReader();
  res.writeHead(status, headers);
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done || res.destroyed) break;
      if (!res.write(chunk.value)) await drained(res);
    }
    if (!res.destroyed) res.end();
  } finally {
    if (res.destroyed) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function drained(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
