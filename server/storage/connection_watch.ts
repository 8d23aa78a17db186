/**
 * A handle on each PostgreSQL connection, through postgres.js's documented `socket` option (a
 * function returning "a socket-like duplex stream"): every connection's socket is wrapped in a
 * `WatchedSocket`, which notes when the connection started waiting for an answer (bytes sent,
 * none received since) and can end the connection.
 *
 * Why: a connection whose peer stopped answering without closing (a network partition, a
 * firewall that drops a connection's packets) leaves its queries waiting for the operating
 * system's TCP timeout, minutes, and postgres.js keeps sending new queries down it. The
 * statement timeout cannot help: the server enforces it, and the server cannot be reached. So
 * the dialect gives each query a deadline of its own, and when a query passes it, the
 * connections that have been waiting since it was sent are ended here (`discardWaitingSince`):
 * their queries fail at once, and postgres.js opens fresh connections for the next ones.
 *
 * Over TLS the wrapper carries the encrypted bytes (postgres.js starts TLS on top of the socket
 * it was given), so it sees the same waiting.
 *
 * @module
 */
import net from "node:net";
import { Duplex } from "node:stream";

/** One connection's socket: the real one inside, and when it started waiting for an answer. */
export class WatchedSocket extends Duplex {
  /** When bytes were first sent after the last bytes received; undefined when not waiting. */
  waitingSince: number | undefined;
  /** postgres.js reads these (for TLS's server name, and in its errors). */
  host: string | undefined;
  port: number | undefined;

  constructor(readonly inner: net.Socket) {
    super({ allowHalfOpen: false });
    inner.on("data", (chunk: Uint8Array) => {
      this.waitingSince = undefined;
      if (!this.push(chunk)) inner.pause();
    });
    inner.on("end", () => this.push(null));
    inner.on("error", (error) => this.destroy(error));
    inner.on("close", () => this.destroy());
  }

  /** As `net.Socket`'s: postgres.js sends its Terminate message only to an open socket. */
  get readyState(): string {
    return this.inner.readyState;
  }

  setKeepAlive(enable?: boolean, initialDelay?: number): this {
    this.inner.setKeepAlive(enable, initialDelay);
    return this;
  }

  setNoDelay(noDelay?: boolean): this {
    this.inner.setNoDelay(noDelay);
    return this;
  }

  override _read(): void {
    this.inner.resume();
  }

  override _write(
    chunk: Uint8Array,
    encoding: BufferEncoding,
    callback: (error?: Error | null) => void,
  ): void {
    this.waitingSince ??= performance.now();
    this.inner.write(chunk, encoding, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.inner.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.inner.destroy();
    callback(error);
  }
}

/** What postgres.js passes to its `socket` function: its options, the hosts among them. */
export interface SocketOptions {
  host: string[];
  port: number[];
  path?: string;
}

/** The sockets of one postgres.js pool: made by `connect`, ended by `discardWaitingSince`. */
export interface ConnectionWatch {
  /** For postgres.js's `socket` option: opens a connection. */
  connect(options: SocketOptions): Promise<WatchedSocket>;
  /**
   * Ends every connection that has been waiting for an answer since `since` or before, and
   * returns how many it ended. Their queries fail with a connection error.
   */
  discardWaitingSince(since: number): number;
  /** The connections open now. */
  readonly sockets: ReadonlySet<WatchedSocket>;
}

export function createConnectionWatch(): ConnectionWatch {
  const sockets = new Set<WatchedSocket>();
  let next = 0;
  return {
    sockets,
    // The socket is handed over while it connects, as postgres.js's own would be: what it
    // writes first waits for the connection, its connect_timeout bounds the wait, and a
    // failure to connect reaches it as the socket's error and close, which it knows to handle.
    connect: (options) => {
      // postgres.js tries the hosts of a multi-host URL in turn; so do we, a host per attempt.
      const i = next++ % Math.max(options.host.length, 1);
      const host = options.host[i] ?? "localhost";
      const port = options.port[i] ?? options.port[0] ?? 5432;
      const inner = options.path ? net.connect({ path: options.path }) : net.connect(port, host);
      const socket = new WatchedSocket(inner);
      socket.host = host;
      socket.port = port;
      sockets.add(socket);
      inner.once("close", () => sockets.delete(socket));
      return Promise.resolve(socket);
    },
    discardWaitingSince: (since) => {
      let ended = 0;
      for (const socket of sockets) {
        if (socket.waitingSince !== undefined && socket.waitingSince <= since) {
          socket.destroy();
          sockets.delete(socket);
          ended++;
        }
      }
      return ended;
    },
  };
}
