import type { Sql } from "postgres";

/** The error a request gets when no connection could be had in time; it answers 503. */
export class AcquireTimeoutError extends Error {
  override name = "AcquireTimeoutError";
  readonly code = "CONNECT_TIMEOUT";
  constructor(ms: number) {
    super(`No database connection within ${ms} ms`);
  }
}

/**
 * Bounds how long Kysely waits for a connection from postgres.js. Kysely takes one with
 * `reserve()` for each query or transaction; postgres.js queues that behind every connection
 * attempt in line, so with a database that does not answer, the request after the pool's first
 * ten would wait for several connect timeouts. A connection that arrives after the deadline
 * goes straight back to the pool.
 */
export function withAcquireDeadline(sql: Sql, ms: number): Sql {
  const reserve = () =>
    new Promise<Awaited<ReturnType<Sql["reserve"]>>>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new AcquireTimeoutError(ms));
      }, ms);
      sql.reserve().then(
        (connection) => {
          if (late) return connection.release();
          clearTimeout(timer);
          resolve(connection);
        },
        (error) => {
          clearTimeout(timer);
          if (!late) reject(error);
        },
      );
    });
  // postgres.js's end() waits for connection attempts still under way for requests that gave
  // up, and never settles: after twice the deadline it closes them by force.
  const end = (options?: { timeout?: number }) => sql.end({ timeout: (2 * ms) / 1000, ...options });
  return new Proxy(sql, {
    get: (target, property, receiver) =>
      property === "reserve"
        ? reserve
        : property === "end"
        ? end
        : Reflect.get(target, property, receiver),
  });
}
