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
 *   at most every second), not by a timer per connection. A sweep that runs late closes nothing,
 *   so a stall of the server's own is not charged to a client whose request waits unread.
 * - **Accept failures survived**: when the process runs out of file descriptors, Deno's `node:net`
 *   listener stops accepting for good, without an error (Deno 2.9). A watchdog notices (no
 *   connection accepted, and a probe connection of its own not accepted within two seconds, or
 *   refused for want of descriptors), lowers the cap to nine tenths of the connections open
 *   (closing the longest-waiting ones), and listens again. The cap climbs back by a hundredth a
 *   second while accepting works. Each kind of warning is logged at most once a second.
 *
 * The handler gets a `Request` (its body streamed, with backpressure; without a body, one that
 * makes Deno's own only when asked for more than its URL, method and headers) and the peer's
 * address. Its `Response` goes out in one piece with a Content-Length, read whole (several times
 * cheaper than chunk by chunk, and the service's answers are small), unless it declares itself a
 * stream (`Transfer-Encoding: chunked`, as tRPC's streaming answers do, or `text/event-stream`):
 * then chunk by chunk, with backpressure.
 *
 * Its parts: the accounting, accepting at the cap and the timeouts' sweep
 * (`serve_connections.ts`), the accept watchdog (`serve_watchdog.ts`) and the request conversion
 * (`serve_exchange.ts`, a bodiless request's `Request` in `serve_request.ts`); `serve()` wires them
 * to node:http.
 *
 * @module
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { apiError } from "../procedures/errors.ts";
import { errorFields, type Logger } from "../base/log.ts";
import { PortInUseError } from "../base/port_in_use.ts";
import {
  type Conn,
  type ConnectionLimits,
  type ConnectionStats,
  ConnectionTable,
  MIN_SIZED_CONNECTIONS,
  RequestBodyError,
  type ServeClient,
} from "./serve_connections.ts";
import { send, toRequest } from "./serve_exchange.ts";
import { type AcceptWatchdog, createAcceptWatchdog } from "./serve_watchdog.ts";

export { PortInUseError, RequestBodyError };
export type { ConnectionLimits, ConnectionStats, ServeClient };

export type ServeHandler = (
  request: Request,
  client: ServeClient,
) => Response | Promise<Response>;

/** The defaults of `HEADERS_TIMEOUT_MS`, `BODY_TIMEOUT_MS` and `IDLE_TIMEOUT_MS`. */
export const DEFAULT_TIMEOUTS = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  idleTimeoutMs: 5_000,
} as const;

/** File descriptors kept free beyond the database and the runner: stdio, the runtime, mail… */
export const RESERVED_FILE_DESCRIPTORS = 64;
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

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const WATCHDOG_MS = 1000;

/** Serves `handler` on `hostname:port`; resolves once listening. */
export async function serve(options: ServeOptions): Promise<HttpServer> {
  const { hostname, handler, log = silent } = options;
  const limits: ConnectionLimits = {
    maxConnections: Number.MAX_SAFE_INTEGER,
    ...DEFAULT_TIMEOUTS,
    ...options.limits,
  };
  const finished = Promise.withResolvers<void>();
  /** The sweep's and the watchdog's timers, and the watchdog once listening. */
  const parts: {
    sweeper?: ReturnType<typeof setInterval>;
    watchdogTimer?: ReturnType<typeof setInterval>;
    watchdog?: AcceptWatchdog;
  } = {};
  const finish = () => {
    clearInterval(parts.sweeper);
    clearInterval(parts.watchdogTimer);
    finished.resolve();
  };
  const table = new ConnectionTable(limits, log, finish);
  const http1 = http.createServer({
    // Timeouts are ours (Deno's port ignores headersTimeout and requestTimeout).
    keepAliveTimeout: 0,
    headersTimeout: 0,
    requestTimeout: 0,
    noDelay: true,
  });
  const keepAlive = `timeout=${Math.max(1, Math.floor(limits.idleTimeoutMs / 1000))}`;
  let hostForUrl = "";

  http1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const conn = table.conns.get(req.socket as Socket);
    if (!conn) {
      req.socket.destroy();
      return;
    }
    conn.active++;
    table.waiting.delete(conn);
    res.once("close", () => {
      if (--conn.active > 0 || conn.socket.destroyed) return;
      if (table.draining) conn.socket.destroySoon();
      else table.startWaiting(conn);
    });
    respond(req, res, conn).catch((error) => {
      log.error("answer failed", errorFields(error));
      res.destroy();
    });
  });

  async function respond(req: http.IncomingMessage, res: http.ServerResponse, conn: Conn) {
    let request: Request;
    try {
      request = toRequest(req, conn, table, hostForUrl);
    } catch {
      req.resume();
      return await send(
        jsonResponse(400, apiError("bad_request").body),
        req,
        res,
        table,
        keepAlive,
      );
    }
    let response: Response;
    try {
      response = await handler(request, conn.client);
    } catch (error) {
      log.error("request failed", errorFields(error));
      response = jsonResponse(500, apiError("internal").body);
    }
    await send(response, req, res, table, keepAlive);
  }

  // The sweep: deadlines of waiting connections and of request bodies.
  parts.sweeper = setInterval(() => table.sweep(performance.now()), table.sweepMs);

  // The listener, and the watchdog that opens it again when accept has stopped.
  http1.on("connection", (socket: Socket) => {
    socket.on("error", () => {}); // resets and the like: the socket closes, nothing to report
    if (parts.watchdog?.accepted(socket)) return;
    table.admit(socket);
  });
  http1.on("error", () => {}); // accept errors, should the runtime report them: see the watchdog
  await listen(http1, hostname, options.port);
  const bound = http1.address() as AddressInfo;
  const addr = { hostname: bound.address, port: bound.port };
  hostForUrl = bound.family === "IPv6"
    ? `[${bound.address}]:${bound.port}`
    : `${bound.address}:${bound.port}`;
  const dog = createAcceptWatchdog({
    server: http1,
    table,
    addr,
    listen: () => listen(http1, addr.hostname, addr.port),
  });
  parts.watchdog = dog;
  parts.watchdogTimer = setInterval(() => void dog.tick(), WATCHDOG_MS);

  let shuttingDown: Promise<void> | undefined;
  const shutdown = () => {
    if (!shuttingDown) {
      table.draining = true;
      dog.endProbe();
      http1.close();
      for (const conn of table.waiting) conn.socket.destroy();
      table.waiting.clear();
      if (table.conns.size === 0) finish();
      shuttingDown = finished.promise;
    }
    return shuttingDown;
  };
  if (options.signal?.aborted) void shutdown();
  options.signal?.addEventListener("abort", () => void shutdown(), { once: true });

  return { addr, finished: finished.promise, shutdown, stats: () => table.stats() };
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

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}
