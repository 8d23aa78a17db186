/**
 * The embedded database has no autovacuum: nothing refreshes the planner's statistics, and a
 * planner without them misjudges every table as tiny (it sorted all 100,000 probes of a project
 * for each page of their list instead of reading the list's index). The service runs `ANALYZE`
 * itself: when it starts and every {@link STATISTICS_EVERY_MS} after. PostgreSQL's own
 * autovacuum does this for a server database.
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "./database.ts";
import { errorFields, type Logger } from "../log.ts";

export const STATISTICS_EVERY_MS = 5 * 60_000;

/** Refreshes the planner's statistics now and on a timer; returns what stops it. */
export function keepStatistics(
  { db, log, everyMs = STATISTICS_EVERY_MS }: { db: Db; log: Logger; everyMs?: number },
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const analyze = () => {
    running = sql`analyze`.execute(db).then(
      () => {},
      (error) => log.warn("refreshing the planner's statistics failed", errorFields(error)),
    );
  };
  analyze();
  const timer = setInterval(analyze, everyMs);
  Deno.unrefTimer(timer);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
