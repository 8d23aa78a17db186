/**
 * Whether an error means the database cannot be reached or cannot answer now (as opposed to a
 * query that is wrong): the server is down, refusing, restarting, overloaded or too slow.
 * Such failures answer 503 and heal by themselves once the database is back.
 */

/** Errors of the socket or of postgres.js's own connection handling. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  // No answer within the query's own deadline (postgres_dialect.ts): a partition, most often.
  "QUERY_DEADLINE",
]);

/** SQLSTATEs of a server going away, starting or full: the connection is no good. */
const CONNECTION_SQLSTATES = [
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
];

/** SQLSTATEs of a server that is going away, starting, overloaded or out of time. */
const UNAVAILABLE_SQLSTATES = new Set([
  ...CONNECTION_SQLSTATES,
  "57P05", // idle_session_timeout
  "57014", // query_canceled: the statement timeout
  "55P03", // lock_not_available: the lock timeout
]);

const CONNECTION_FAILURES = new Set([...CONNECTION_CODES, ...CONNECTION_SQLSTATES]);

/**
 * Whether an error code says a connection could not be opened, was lost or was refused (class
 * 08 included), as opposed to the query's own fault. For the PostgreSQL dialect's gate.
 */
export function isConnectionFailureCode(code: string): boolean {
  return CONNECTION_FAILURES.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; depth++) {
    if (typeof e !== "object") return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      if (isConnectionFailureCode(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** What a 503 may say when the database did not answer a query within its deadline. */
export const DEADLINE_MESSAGE = "The database did not answer in time";

/**
 * The message for an unavailability that has more to say than that the database is not
 * available (a query past its deadline), or undefined. For `toApiError` in server/procedures/errors.ts.
 */
export function unavailableMessage(error: unknown): string | undefined {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === "QUERY_DEADLINE") return DEADLINE_MESSAGE;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
