/**
 * The HTTP server's connection layer: HTTP/1.1 by `node:http` (Deno's port of Node's server),
 * with our own accounting that counts, times and sheds connections. `Deno.serve` has no
 * connection cap, no header or body timeout, and ends for good when accept fails with EMFILE;
 * this layer gives the service:
 *
 * - **A cap on open connections** (`maxConnections`). At the cap a new connection makes room by
 *   closing the connection that has waited longest for a request (never one with a request in
 *   progress); only when every connection is busy is the new one closed. Connections that hold
 *   the cap without sending a request cannot lock out health checks and real callers.
 * - **Timeouts**: a connection waiting for a request (new, or kept alive after an answer) is closed
 *   after `idleTimeoutMs` if nothing has arrived, and after `headersTimeoutMs` if a request has
 *   begun but its head is not complete; a request body must arrive in full within `bodyTimeoutMs`
 *   of its head, or the connection is closed and the body stream of the `Request` errors with a
 *   `RequestBodyError`. Deadlines are checked by one sweep (every quarter of the shortest timeout,
 *   at most every second), not by a timer per connection.
 * - **Accept failures survived**: when the process runs out of file descriptors, Deno's `node:net`
 *   listener stops accepting for good, without an error (Deno 2.9). A watchdog notices (no
 *   connection accepted, and a probe connection of its own not accepted within two seconds, or
 *   refused for want of descriptors), lowers the cap to nine tenths of the connections open
 *   (closing the longest-waiting ones), and listens again. The cap climbs back by a hundredth a
 *   second while accepting works. Each kind of warning is logged at most once a second.
 *
 * The handler gets a standard `Request` (its body streamed, with backpressure) and the peer's
 * address. Its `Response` goes out in one piece with a Content-Length, read whole (several times
 * cheaper than chunk by chunk, and the service's answers are small), unless it declares itself a
 * stream (`Transfer-Encoding: chunked`, as tRPC's streaming answers do, or `text/event-stream`):
 * then chunk by chunk, with backpressure.
 *
 * @module
 */
import http from "node:http";
import type { Buffer } from "node:buffer";
import type { AddressInfo, Socket } from "node:net";
import { apiError } from "../errors.ts";
import { errorFields, type Logger } from "../log.ts";
import { PortInUseError } from "../net/port_in_use.ts";

export { PortInUseError };

/** The peer of a request. */
export interface ServeClient {
  address: string;
}

export type ServeHandler = (
  request: Request,
  client: ServeClient,
) => Response | Promise<Response>;

export interface ConnectionLimits {
  /** Open connections at most; at the cap the longest-waiting idle one is closed. */
  maxConnections: number;
  /** From accept (or the previous answer) to a complete request head, once bytes have arrived. */
  headersTimeoutMs: number;
  /** From a request's head to the last byte of its body. */
  bodyTimeoutMs: number;
  /** How long a connection waiting for a request may stay silent. */
  idleTimeoutMs: number;
}

/** The defaults of `HEADERS_TIMEOUT_MS`, `BODY_TIMEOUT_MS` and `IDLE_TIMEOUT_MS`. */
export const DEFAULT_TIMEOUTS = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  idleTimeoutMs: 5_000,
} as const;

/** File descriptors kept free beyond the database and the runner: stdio, the runtime, mail… */
export const RESERVED_FILE_DESCRIPTORS = 64;
/** The least `maxConnections` sized from a small file limit. */
const MIN_SIZED_CONNECTIONS = 16;
/**
 * The most `maxConnections` sized from a large file limit: an idle connection costs some 10 KiB,
 * so this bounds the memory idle connections can take to under 200 MiB.
 */
export const MAX_SIZED_CONNECTIONS = 16_384;
/** Taken for the free descriptors when they cannot be counted (no /dev/null). */
export const ASSUMED_FREE_FILE_DESCRIPTORS = 1024;

/**
 * The default `MAX_CONNECTIONS`: the descriptors free at start less what the rest of the process
 * may hold open (`reserved`: the database, the runner's probes, `RESERVED_FILE_DESCRIPTORS`),
 * between 16 and `MAX_SIZED_CONNECTIONS`.
 */
export function sizeMaxConnections(free: number, reserved: number): number {
  return Math.min(MAX_SIZED_CONNECTIONS, Math.max(MIN_SIZED_CONNECTIONS, free - reserved));
}

/**
 * How many more files this process can open now, up to `upTo`: /dev/null is opened until the
 * limit refuses (`ulimit -n` less what is open), then closed again. Deno offers no way to read
 * the limit itself (`/proc/self/limits` takes --allow-all). Undefined when nothing can be opened.
 */
export function countFreeFileDescriptors(
  upTo: number,
  open: () => { close(): void } = () => Deno.openSync("/dev/null"),
): number | undefined {
  const opened: { close(): void }[] = [];
  try {
    while (opened.length < upTo) opened.push(open());
  } catch {
    // The limit, or no /dev/null: what was opened is the answer.
  } finally {
    for (const file of opened) file.close();
  }
  return opened.length > 0 ? opened.length : undefined;
}

/** The body of a request could not be read: the client stopped sending or went away. */
export class RequestBodyError extends Error {
  override name = "RequestBodyError";
  constructor(readonly reason: "timeout" | "aborted", message: string) {
    super(message);
  }
}

/** What the layer has done, for tests and diagnostics. */
export interface ConnectionStats {
  /** Open now. */
  open: number;
  /** Open now and waiting for a request. */
  waiting: number;
  accepted: number;
  /** Closed at the cap to make room for a new one. */
  evicted: number;
  /** New connections closed at once: at the cap with every connection busy. */
  refused: number;
  idleClosed: number;
  headersTimedOut: number;
  bodyTimedOut: number;
  /** Times the listener was found not accepting and opened again. */
  relistened: number;
}

export interface ServeOptions {
  hostname: string;
  port: number;
  handler: ServeHandler;
  limits?: Partial<ConnectionLimits>;
  log?: Logger;
  /** Aborting it is `shutdown()`. */
  signal?: AbortSignal;
}

export interface HttpServer {
  addr: { hostname: string; port: number };
  /** Resolves once the server has shut down and every connection is closed. */
  finished: Promise<void>;
  /**
   * Stops accepting, closes connections waiting for a request, lets requests in progress finish
   * (each answered with `Connection: close`), and resolves when the last connection has closed.
   */
  shutdown(): Promise<void>;
  stats(): ConnectionStats;
}

interface Conn {
  socket: Socket;
  client: ServeClient;
  /** Requests whose answer has not finished. */
  active: number;
  /** When the connection began to wait for a request (accept, or the end of the last answer). */
  readyAt: number;
  /** `socket.bytesRead` then: more means a request has begun. */
  bytesAtReady: number;
}

/** A connection of the watchdog's own, to see whether the listener still accepts. */
interface Probe {
  conn?: Deno.Conn;
  localPort?: number;
  sentAt: number;
}

interface BodyRead {
  conn: Conn;
  deadline: number;
  fail(error: RequestBodyError): void;
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
/** A Host header we build URLs from; anything else is replaced by the listening address. */
const HOST_HEADER = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const WATCHDOG_MS = 1000;
const STALL_MS = 2000;

/** Serves `handler` on `hostname:port`; resolves once listening. */
export async function serve(options: ServeOptions): Promise<HttpServer> {
  const { hostname, handler, log = silent } = options;
  const limits: ConnectionLimits = {
    maxConnections: Number.MAX_SAFE_INTEGER,
    ...DEFAULT_TIMEOUTS,
    ...options.limits,
  };
  const stats: Omit<ConnectionStats, "open" | "waiting"> = {
    accepted: 0,
    evicted: 0,
    refused: 0,
    idleClosed: 0,
    headersTimedOut: 0,
    bodyTimedOut: 0,
    relistened: 0,
  };
  const conns = new Map<Socket, Conn>();
  /** Connections without a request in progress, in the order they began to wait. */
  const waiting = new Set<Conn>();
  /** Request bodies being received, in the order they began (so by deadline). */
  const bodies = new Set<BodyRead>();
  const readOf = new WeakMap<http.IncomingMessage, BodyRead>();
  let draining = false;
  /** The cap in force: `maxConnections`, or less for a while after running out of descriptors. */
  let cap = limits.maxConnections;
  const finished = Promise.withResolvers<void>();

  const warnings = new Map<string, number>();
  const warn = (msg: string, fields?: Record<string, unknown>) => {
    const now = Date.now();
    if (now - (warnings.get(msg) ?? 0) < 1000) return;
    warnings.set(msg, now);
    log.warn(msg, fields);
  };

  const http1 = http.createServer({
    // Timeouts are ours (Deno's port ignores headersTimeout and requestTimeout).
    keepAliveTimeout: 0,
    headersTimeout: 0,
    requestTimeout: 0,
    noDelay: true,
  });

  const startWaiting = (conn: Conn) => {
    conn.readyAt = performance.now();
    conn.bytesAtReady = conn.socket.bytesRead;
    waiting.add(conn);
  };

  const close = (
    conn: Conn,
    why: "evicted" | "idleClosed" | "headersTimedOut" | "bodyTimedOut",
  ) => {
    stats[why]++;
    waiting.delete(conn);
    conns.delete(conn.socket);
    conn.socket.destroy();
    if (draining && conns.size === 0) finish();
  };

  const onConnection = (socket: Socket) => {
    socket.on("error", () => {}); // resets and the like: the socket closes, nothing to report
    acceptedSinceCheck++; // the listener works, whoever this is
    if (probe?.localPort !== undefined && isProbe(socket, probe.localPort)) {
      socket.destroy();
      return;
    }
    stats.accepted++;
    if (draining) {
      socket.destroy();
      return;
    }
    if (conns.size >= cap) {
      const idlest = waiting.values().next().value;
      if (idlest) close(idlest, "evicted");
      else {
        stats.refused++;
        socket.destroy();
        warn("connection refused: every connection is busy", { max: cap });
        return;
      }
      warn("connection limit reached: closing the longest-waiting connections", { max: cap });
    }
    const conn: Conn = {
      socket,
      client: { address: peerAddress(socket.remoteAddress) },
      active: 0,
      readyAt: 0,
      bytesAtReady: 0,
    };
    conns.set(socket, conn);
    startWaiting(conn);
    socket.once("close", () => {
      conns.delete(socket);
      waiting.delete(conn);
      if (draining && conns.size === 0) finish();
    });
  };

  http1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const conn = conns.get(req.socket as Socket);
    if (!conn) {
      req.socket.destroy();
      return;
    }
    conn.active++;
    waiting.delete(conn);
    res.once("close", () => {
      if (--conn.active > 0 || conn.socket.destroyed) return;
      if (draining) conn.socket.destroySoon();
      else startWaiting(conn);
    });
    respond(req, res, conn).catch((error) => {
      log.error("answer failed", errorFields(error));
      res.destroy();
    });
  });

  async function respond(req: http.IncomingMessage, res: http.ServerResponse, conn: Conn) {
    let request: Request;
    try {
      request = toRequest(req, conn);
    } catch {
      req.resume();
      return await send(jsonResponse(400, apiError("bad_request").body), req, res);
    }
    let response: Response;
    try {
      response = await handler(request, conn.client);
    } catch (error) {
      log.error("request failed", errorFields(error));
      response = jsonResponse(500, apiError("internal").body);
    }
    await send(response, req, res);
  }

  function toRequest(req: http.IncomingMessage, conn: Conn): Request {
    const target = req.url ?? "";
    const host = req.headers.host;
    let url: string;
    if (target.startsWith("/")) {
      url = `http://${host && HOST_HEADER.test(host) ? host : hostForUrl}${target}`;
    } else if (/^https?:\/\//i.test(target)) url = target;
    else throw new TypeError("Unsupported request target");
    // Pairs, not a Headers object: Request copies those several times faster.
    const raw = req.rawHeaders;
    const headers: [string, string][] = [];
    for (let i = 0; i < raw.length; i += 2) headers.push([raw[i], raw[i + 1]]);
    const method = req.method ?? "GET";
    // As with Deno.serve, a request without a body has `body` null.
    const hasBody = req.headers["transfer-encoding"] !== undefined ||
      Number(req.headers["content-length"] ?? 0) > 0;
    if (!hasBody) return new Request(url, { method, headers });
    return new Request(
      url,
      { method, headers, body: bodyOf(req, conn), duplex: "half" } as
        & RequestInit
        & { duplex: "half" },
    );
  }

  /** The request's body as a stream, with backpressure and the body deadline. */
  function bodyOf(req: http.IncomingMessage, conn: Conn): ReadableStream<Uint8Array> {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let done = false;
    const read: BodyRead = {
      conn,
      deadline: performance.now() + limits.bodyTimeoutMs,
      fail(error) {
        if (done) return;
        done = true;
        bodies.delete(read);
        controller.error(error);
      },
    };
    bodies.add(read);
    readOf.set(req, read);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      pull() {
        req.resume();
      },
      cancel() {
        done = true;
        req.off("data", onData);
        req.resume(); // what is left is read and dropped; the deadline still holds
      },
    }, { highWaterMark: 65536, size: (chunk) => chunk.byteLength });
    const onData = (chunk: Buffer) => {
      if (done) return;
      controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      if ((controller.desiredSize ?? 0) <= 0) req.pause();
    };
    req.on("data", onData);
    req.once("end", () => {
      bodies.delete(read);
      if (done) return;
      done = true;
      controller.close();
    });
    req.once("close", () => {
      bodies.delete(read);
      if (!req.complete) {
        read.fail(new RequestBodyError("aborted", "The client closed the connection mid-body"));
      }
    });
    return stream;
  }

  async function send(response: Response, req: http.IncomingMessage, res: http.ServerResponse) {
    // `response.body` is not touched unless streaming: for a body given as text, the getter
    // builds a stream, and costs more than reading the body whole with `bytes()`.
    if (res.destroyed) {
      await response.body?.cancel().catch(() => {});
      return;
    }
    const status = response.status;
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
    // A request whose body was not read in full ends its connection (its rest is not waited
    // for), and so does every request while shutting down.
    const read = readOf.get(req);
    if (draining || (read && bodies.has(read))) headers.push("connection", "close");
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

  // The sweep: deadlines of waiting connections and of request bodies.
  const keepAlive = `timeout=${Math.max(1, Math.floor(limits.idleTimeoutMs / 1000))}`;
  const shortest = Math.min(limits.headersTimeoutMs, limits.idleTimeoutMs, limits.bodyTimeoutMs);
  const sweepMs = Math.max(25, Math.min(1000, Math.floor(shortest / 4)));
  const waitFloor = Math.min(limits.headersTimeoutMs, limits.idleTimeoutMs);
  const sweep = () => {
    const now = performance.now();
    for (const conn of waiting) {
      const waited = now - conn.readyAt;
      if (waited < waitFloor) break;
      if (conn.socket.bytesRead === conn.bytesAtReady) {
        if (waited >= limits.idleTimeoutMs) close(conn, "idleClosed");
      } else if (waited >= limits.headersTimeoutMs) close(conn, "headersTimedOut");
    }
    for (const read of bodies) {
      if (now < read.deadline) break;
      stats.bodyTimedOut++;
      read.fail(
        new RequestBodyError(
          "timeout",
          `The request body did not arrive within ${limits.bodyTimeoutMs} ms`,
        ),
      );
      read.conn.socket.destroy();
    }
  };
  const sweeper = setInterval(sweep, sweepMs);

  // The listener, and the watchdog that opens it again when accept has stopped.
  http1.on("connection", onConnection);
  http1.on("error", () => {}); // accept errors, should the runtime report them: see the watchdog
  await listen(http1, hostname, options.port);
  const bound = http1.address() as AddressInfo;
  const addr = { hostname: bound.address, port: bound.port };
  const hostForUrl = bound.family === "IPv6"
    ? `[${bound.address}]:${bound.port}`
    : `${bound.address}:${bound.port}`;
  const probeHost = bound.address === "0.0.0.0"
    ? "127.0.0.1"
    : bound.address === "::"
    ? "::1"
    : bound.address;
  let acceptedSinceCheck = 0;
  let probe: Probe | null = null;
  let relistening = false;
  const isProbe = (socket: Socket, localPort: number) =>
    socket.remotePort === localPort && peerAddress(socket.remoteAddress) === peerAddress(probeHost);
  const endProbe = () => {
    try {
      probe?.conn?.close();
    } catch { /* closed already */ }
    probe = null;
  };
  /**
   * Out of file descriptors: the cap drops to nine tenths of the connections open now (the
   * longest-waiting ones close to get there), and climbs back by a hundredth of `maxConnections`
   * a second while accepting works.
   */
  const lowerCap = () => {
    cap = Math.max(MIN_SIZED_CONNECTIONS, Math.floor(conns.size * 0.9));
    for (const conn of waiting) {
      if (conns.size <= cap) break;
      close(conn, "evicted");
    }
  };
  const relisten = async () => {
    relistening = true;
    try {
      if (http1.listening) http1.close();
      await listen(http1, addr.hostname, addr.port);
      stats.relistened++;
    } catch (error) {
      warn("listening again failed; retrying", errorFields(error));
    } finally {
      relistening = false;
    }
  };
  const watchdog = async () => {
    if (draining || relistening) return;
    if (!http1.listening) return await relisten();
    if (acceptedSinceCheck > 0) {
      acceptedSinceCheck = 0;
      endProbe();
      if (cap < limits.maxConnections) {
        cap = Math.min(limits.maxConnections, cap + Math.ceil(limits.maxConnections / 100));
      }
      return;
    }
    if (probe && performance.now() - probe.sentAt >= STALL_MS) {
      endProbe();
      warn("the listener stopped accepting (out of file descriptors?); listening again", {
        open: conns.size,
      });
      lowerCap();
      return await relisten();
    }
    if (probe) return;
    const sent: Probe = { sentAt: performance.now() };
    probe = sent;
    try {
      const conn = await Deno.connect({ hostname: probeHost, port: addr.port });
      if (probe !== sent || draining) {
        conn.close();
        return;
      }
      sent.conn = conn;
      sent.localPort = (conn.localAddr as Deno.NetAddr).port;
      // Accepted already (before the connect resolved here): not a connection to keep.
      for (const [socket, accepted] of conns) {
        if (isProbe(socket, sent.localPort)) {
          conns.delete(socket);
          waiting.delete(accepted);
          stats.accepted--;
          socket.destroy();
          break;
        }
      }
    } catch (error) {
      if (probe === sent) probe = null;
      if (isOutOfDescriptors(error)) {
        warn("out of file descriptors; lowering the connection cap", { open: conns.size });
        lowerCap();
      }
    }
  };
  const watchdogTimer = setInterval(() => void watchdog(), WATCHDOG_MS);

  let shuttingDown: Promise<void> | undefined;
  const finish = () => {
    clearInterval(sweeper);
    clearInterval(watchdogTimer);
    finished.resolve();
  };
  const shutdown = () => {
    if (!shuttingDown) {
      draining = true;
      endProbe();
      http1.close();
      for (const conn of waiting) conn.socket.destroy();
      waiting.clear();
      if (conns.size === 0) finish();
      shuttingDown = finished.promise;
    }
    return shuttingDown;
  };
  if (options.signal?.aborted) void shutdown();
  options.signal?.addEventListener("abort", () => void shutdown(), { once: true });

  return {
    addr,
    finished: finished.promise,
    shutdown,
    stats: () => ({ ...stats, open: conns.size, waiting: waiting.size }),
  };
}

/** Listens on `hostname:port`; a port in use is a `PortInUseError`. */
function listen(server: http.Server, hostname: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      server.off("listening", done);
      reject(error.code === "EADDRINUSE" ? new PortInUseError(hostname, port) : error);
    };
    const done = () => {
      server.off("error", failed);
      resolve();
    };
    server.once("error", failed);
    server.once("listening", done);
    server.listen({ host: hostname, port, backlog: 511, exclusive: true });
  });
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

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

/** The peer's address as Deno.serve gives it: IPv4-mapped IPv6 addresses as plain IPv4. */
function peerAddress(address: string | undefined): string {
  if (!address) return "unknown";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

function isOutOfDescriptors(error: unknown): boolean {
  const text = String((error as { message?: unknown })?.message ?? error);
  return /os error 2[34]\b|EMFILE|ENFILE|Too many open files/i.test(text);
}
