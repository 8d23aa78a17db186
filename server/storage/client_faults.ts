/**
 * A fault of the PostgreSQL client must not end the process: one bad connection would take down
 * every probe and answer.
 *
 * postgres.js 3.4.9 writes small messages from a `setImmediate` (`nextWrite`, src/connection.js
 * line 255) and does not check that the connection still has its socket. A query given to a
 * connection that has closed (a reserved connection's next query or rollback, after the
 * connection was lost under it) throws `TypeError: Cannot read properties of null (reading
 * 'write')` there, where no caller can catch it: an uncaught exception, which ends a Deno
 * process. Upstream: porsager/postgres issues 1066, 1154 and 1208, unfixed in 3.4.9. The
 * dialect no longer sends on a connection it saw fail (`postgres_dialect.ts`, `broken`); this
 * is the net under that, for any other way into the same fault: an uncaught error or unhandled
 * rejection thrown from postgres.js's own code is logged and the process goes on. The
 * connection it happened on has closed already; postgres.js opens a new one for the next
 * queries. Any other uncaught error still ends the process, as before.
 *
 * Only public interfaces: the runtime's `error` and `unhandledrejection` events.
 *
 * @module
 */
import { errorFields, type Logger } from "../base/log.ts";

/** A stack frame inside the postgres.js package (npm cache or node_modules, ESM or CJS). */
const CLIENT_FRAME = /[/\\]postgres[/\\](?:[0-9][^/\\]*[/\\])?(?:cjs[/\\])?src[/\\][a-z_]+\.js:\d/;

/** Whether `error` was thrown by postgres.js itself: its first stack frame is in the package. */
export function isDatabaseClientFault(error: unknown): boolean {
  if (!(error instanceof Error) || typeof error.stack !== "string") return false;
  const frame = error.stack.split("\n").find((line) => /^\s+at /.test(line));
  return frame !== undefined && CLIENT_FRAME.test(frame);
}

/**
 * Keeps the process alive through faults of the database client: each is logged as an error
 * (`database client fault`) and counted; the returned function removes the handlers. Installed
 * by the server and the standalone runner at start-up.
 */
export function surviveDatabaseClientFaults(log: Logger): { remove(): void; count(): number } {
  let count = 0;
  const survive = (event: Event, error: unknown) => {
    if (!isDatabaseClientFault(error)) return;
    event.preventDefault();
    count++;
    log.error("database client fault: the process goes on", errorFields(error));
  };
  const onError = (event: ErrorEvent) => survive(event, event.error);
  const onRejection = (event: PromiseRejectionEvent) => survive(event, event.reason);
  globalThis.addEventListener("error", onError);
  globalThis.addEventListener("unhandledrejection", onRejection);
  return {
    remove: () => {
      globalThis.removeEventListener("error", onError);
      globalThis.removeEventListener("unhandledrejection", onRejection);
    },
    count: () => count,
  };
}
