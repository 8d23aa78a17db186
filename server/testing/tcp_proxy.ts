/**
 * A TCP proxy for tests of links that fail: it forwards connections on its port to a target
 * port, and `cut()` drops every connection and refuses new ones (its port closed) until
 * `restore()` listens again on the same port.
 *
 * @module
 */

export interface TcpProxy {
  /** `http://127.0.0.1:<port>`: where to connect. */
  url: string;
  port: number;
  /** Drops every open connection and stops accepting. */
  cut(): void;
  /** Accepts (and forwards) again, on the same port. */
  restore(): void;
  close(): Promise<void>;
}

export function startTcpProxy(targetPort: number): TcpProxy {
  let listener: Deno.TcpListener | null = null;
  const open = new Set<Deno.Conn>();
  const serving = new Set<Promise<void>>();
  let port = 0;

  function listen() {
    listener = Deno.listen({ hostname: "127.0.0.1", port });
    port = (listener.addr as Deno.NetAddr).port;
    const accepting = listener;
    const loop = (async () => {
      for await (const conn of accepting) void forward(conn);
    })().catch(() => {});
    serving.add(loop);
    loop.finally(() => serving.delete(loop));
  }

  async function forward(client: Deno.Conn) {
    let upstream: Deno.Conn;
    try {
      upstream = await Deno.connect({ hostname: "127.0.0.1", port: targetPort });
    } catch {
      client.close();
      return;
    }
    open.add(client);
    open.add(upstream);
    const pipe = (from: Deno.Conn, to: Deno.Conn) =>
      from.readable.pipeTo(to.writable).catch(() => {});
    await Promise.race([pipe(client, upstream), pipe(upstream, client)]);
    for (const c of [client, upstream]) {
      open.delete(c);
      try {
        c.close();
      } catch { /* closed already */ }
    }
  }

  function dropAll() {
    for (const c of open) {
      try {
        c.close();
      } catch { /* closed already */ }
    }
    open.clear();
  }

  listen();
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    cut() {
      listener?.close();
      listener = null;
      dropAll();
    },
    restore() {
      if (!listener) listen();
    },
    async close() {
      listener?.close();
      listener = null;
      dropAll();
      await Promise.allSettled([...serving]);
    },
  };
}
