/**
 * A receiver that hangs: it accepts the connection and never answers, on 127.0.0.1 and a port of
 * its own. No dependencies: benchmarks use it as well as tests.
 *
 * @module
 */

/**
 * A receiver that accepts every connection and never answers: it reads what arrives, only to see
 * the client give up. `open()` counts the connections it holds, `accepted()` all it took, and
 * `closedAt` says when each one the client dropped was dropped.
 */
export function silentReceiver() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held = new Set<Deno.Conn>();
  const closedAt: number[] = [];
  let accepted = 0;
  const drain = async (conn: Deno.Conn) => {
    const buffer = new Uint8Array(4096);
    try {
      while (await conn.read(buffer) !== null) { /* never answered */ }
    } catch { /* reset by the client */ }
    if (held.delete(conn)) {
      closedAt.push(Date.now());
      conn.close();
    }
  };
  (async () => {
    for await (const conn of listener) {
      accepted++;
      held.add(conn);
      drain(conn);
    }
  })().catch(() => {/* the listener closed */});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/hook`,
    open: () => held.size,
    accepted: () => accepted,
    closedAt,
    close() {
      listener.close();
      for (const conn of held) conn.close();
      held.clear();
    },
  };
}
