/**
 * The connection layer's accounting (`serve.ts`): the open connections, the ones waiting for a
 * request (oldest first), the request bodies being received (by deadline), the cap in force and
 * the counts. Accepting and the cap (`admit`), the timeouts (`sweep`) and lowering the cap when
 * descriptors run out (`lowerCap`) are done here; the parts of `serve.ts` share one table.
 *
 * @module
 */
import type http from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "../base/log.ts";

/** The peer of a request. */
export interface ServeClient {
  address: string;
}

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

export interface Conn {
  socket: Socket;
  client: ServeClient;
  /** Requests whose answer has not finished. */
  active: number;
  /** When the connection began to wait for a request (accept, or the end of the last answer). */
  readyAt: number;
  /** `socket.bytesRead` then: more means a request has begun. */
  bytesAtReady: number;
}

export interface BodyRead {
  conn: Conn;
  deadline: number;
  fail(error: RequestBodyError): void;
  /** Reads the rest and drops it; resolves once it has all arrived, false after `ms`. */
  drain(ms: number): Promise<boolean>;
}

/** The body of a request could not be read: the client stopped sending or went away. */
export class RequestBodyError extends Error {
  override name = "RequestBodyError";
  constructor(readonly reason: "timeout" | "aborted", message: string) {
    super(message);
  }
}

/** The least `maxConnections` sized from a small file limit. */
export const MIN_SIZED_CONNECTIONS = 16;

type CloseReason = "evicted" | "idleClosed" | "headersTimedOut" | "bodyTimedOut";

/** The peer's address as Deno.serve gives it: IPv4-mapped IPv6 addresses as plain IPv4. */
export function peerAddress(address: string | undefined): string {
  if (!address) return "unknown";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

export class ConnectionTable {
  readonly conns = new Map<Socket, Conn>();
  /** Connections without a request in progress, in the order they began to wait. */
  readonly waiting = new Set<Conn>();
  /** Request bodies being received, in the order they began (so by deadline). */
  readonly bodies = new Set<BodyRead>();
  readonly readOf = new WeakMap<http.IncomingMessage, BodyRead>();
  readonly counts: Omit<ConnectionStats, "open" | "waiting"> = {
    accepted: 0,
    evicted: 0,
    refused: 0,
    idleClosed: 0,
    headersTimedOut: 0,
    bodyTimedOut: 0,
    relistened: 0,
  };
  draining = false;
  /** The cap in force: `maxConnections`, or less for a while after running out of descriptors. */
  cap: number;
  /** How often `sweep` should run: a quarter of the shortest timeout, 25 ms to 1 s. */
  readonly sweepMs: number;
  readonly #warnings = new Map<string, number>();
  /** When the last sweep ran, and whether it let its deadlines pass because it ran late. */
  #lastSweep = -Infinity;
  #deferred = false;

  constructor(
    readonly limits: ConnectionLimits,
    readonly log: Logger,
    /** Called when draining and the last connection has closed. */
    readonly onDrained: () => void,
  ) {
    this.cap = limits.maxConnections;
    const shortest = Math.min(limits.headersTimeoutMs, limits.idleTimeoutMs, limits.bodyTimeoutMs);
    this.sweepMs = Math.max(25, Math.min(1000, Math.floor(shortest / 4)));
  }

  /** Each kind of warning is logged at most once a second. */
  warn(msg: string, fields?: Record<string, unknown>): void {
    const now = Date.now();
    if (now - (this.#warnings.get(msg) ?? 0) < 1000) return;
    this.#warnings.set(msg, now);
    this.log.warn(msg, fields);
  }

  startWaiting(conn: Conn): void {
    conn.readyAt = performance.now();
    conn.bytesAtReady = conn.socket.bytesRead;
    this.waiting.add(conn);
  }

  close(conn: Conn, why: CloseReason): void {
    this.counts[why]++;
    this.waiting.delete(conn);
    this.conns.delete(conn.socket);
    conn.socket.destroy();
    if (this.draining && this.conns.size === 0) this.onDrained();
  }

  /**
   * A new connection: at the cap it makes room by closing the connection that has waited longest
   * for a request (never one with a request in progress); when every connection is busy it is
   * closed itself.
   */
  admit(socket: Socket): void {
    this.counts.accepted++;
    if (this.draining) {
      socket.destroy();
      return;
    }
    if (this.conns.size >= this.cap) {
      const idlest = this.waiting.values().next().value;
      if (idlest) this.close(idlest, "evicted");
      else {
        this.counts.refused++;
        socket.destroy();
        this.warn("connection refused: every connection is busy", { max: this.cap });
        return;
      }
      this.warn("connection limit reached: closing the longest-waiting connections", {
        max: this.cap,
      });
    }
    const conn: Conn = {
      socket,
      client: { address: peerAddress(socket.remoteAddress) },
      active: 0,
      readyAt: 0,
      bytesAtReady: 0,
    };
    this.conns.set(socket, conn);
    this.startWaiting(conn);
    socket.once("close", () => {
      this.conns.delete(socket);
      this.waiting.delete(conn);
      if (this.draining && this.conns.size === 0) this.onDrained();
    });
  }

  /**
   * The deadlines of waiting connections and of request bodies, checked at `now`. A sweep that
   * runs late (the event loop was busy for over two intervals) closes nothing: bytes may be
   * waiting unread in a socket that looks idle, and timers run before reads. The next sweep,
   * after the reads, does close what is still due.
   */
  sweep(now: number): void {
    const late = now - this.#lastSweep > 2 * this.sweepMs;
    this.#lastSweep = now;
    if (late && !this.#deferred) {
      this.#deferred = true;
      return;
    }
    this.#deferred = false;
    const limits = this.limits;
    const waitFloor = Math.min(limits.headersTimeoutMs, limits.idleTimeoutMs);
    for (const conn of this.waiting) {
      const waited = now - conn.readyAt;
      if (waited < waitFloor) break;
      if (conn.socket.bytesRead === conn.bytesAtReady) {
        if (waited >= limits.idleTimeoutMs) this.close(conn, "idleClosed");
      } else if (waited >= limits.headersTimeoutMs) this.close(conn, "headersTimedOut");
    }
    for (const read of this.bodies) {
      if (now < read.deadline) break;
      this.counts.bodyTimedOut++;
      read.fail(
        new RequestBodyError(
          "timeout",
          `The request body did not arrive within ${limits.bodyTimeoutMs} ms`,
        ),
      );
      read.conn.socket.destroy();
    }
  }

  /**
   * Out of file descriptors: the cap drops to nine tenths of the connections open now (the
   * longest-waiting ones close to get there).
   */
  lowerCap(): void {
    this.cap = Math.max(MIN_SIZED_CONNECTIONS, Math.floor(this.conns.size * 0.9));
    for (const conn of this.waiting) {
      if (this.conns.size <= this.cap) break;
      this.close(conn, "evicted");
    }
  }

  /** While accepting works, the cap climbs back by a hundredth of `maxConnections`. */
  raiseCap(): void {
    const max = this.limits.maxConnections;
    if (this.cap < max) this.cap = Math.min(max, this.cap + Math.ceil(max / 100));
  }

  stats(): ConnectionStats {
    return { ...this.counts, open: this.conns.size, waiting: this.waiting.size };
  }
}
