/**
 * The hostile JSON target, for tests and `deno task bench:hostile`: on 127.0.0.1, a
 * port of its own, every path answers 200 `application/json` with 1 MB of nested arrays
 * (`"[" × 500,000` then `"]" × 500,000`), and `probesWithManyChecks` gives the probe bodies
 * that watch it with 20 `expect.json` checks each, every one failing on such a body.
 *
 * @module
 */

/** Depth of the nested arrays: 1 MB of body. */
export const HOSTILE_DEPTH = 500_000;

export interface HostileTarget {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Requests answered so far. */
  hits(): number;
  close(): Promise<void>;
}

/** Starts the target; the body is made once and served from memory. */
export function startHostileTarget(depth = HOSTILE_DEPTH): Promise<HostileTarget> {
  const body = new TextEncoder().encode("[".repeat(depth) + "]".repeat(depth));
  let hits = 0;
  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        resolve({
          origin: `http://127.0.0.1:${port}`,
          hits: () => hits,
          close: () => server.shutdown(),
        }),
    }, async (request) => {
      hits++;
      await request.body?.cancel();
      return new Response(body, { headers: { "content-type": "application/json" } });
    });
  });
}

/**
 * `count` probe definitions (for `POST …/probes`) on distinct URLs of the target, each with 20
 * `expect.json` checks that fail against the nested arrays: the whole document and its first
 * element compared with scalars (which once serialised the whole value for `seen`), and
 * members that do not exist.
 */
export function probesWithManyChecks(origin: string, count: number) {
  const json = Array.from({ length: 20 }, (_, i) => {
    switch (i % 4) {
      case 0:
        return { path: "", op: "eq", value: i };
      case 1:
        return { path: "/0", op: "eq", value: "x" };
      case 2:
        return { path: "/0/0/0", op: "contains", value: i };
      default:
        return { path: `/status${i}`, op: "exists" };
    }
  });
  return Array.from({ length: count }, (_, i) => ({
    url: `${origin}/hostile/${i}`,
    expect: { json },
  }));
}
