/**
 * A PostgreSQL server that takes connections and never says a word, as a hung or half-dead one
 * would, with a database handle opened on it: for the tests of what gives up, and how fast.
 *
 * @module
 */
import { type DatabaseHandle, openDatabase } from "../storage/database.ts";
import { sparePort } from "./cluster.ts";

export interface HungDatabase {
  database: DatabaseHandle;
  /** Closes the handle, then the listener and every connection it took. */
  close(): Promise<void>;
}

/** Opens a handle (connect timeout `connectTimeoutMs`) on a listener that never answers. */
export async function openHungDatabase(connectTimeoutMs: number): Promise<HungDatabase> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: sparePort() });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const conn of listener) held.push(conn);
    } catch { /* closed */ }
  })();
  const { port } = listener.addr as Deno.NetAddr;
  const database = await openDatabase({
    kind: "postgres",
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    connectTimeoutMs,
  });
  return {
    database,
    async close() {
      await database.close();
      listener.close();
      await accepting;
      for (const conn of held) conn.close();
    },
  };
}
