/**
 * The embedded database has no autovacuum: nothing refreshes the planner's statistics, and a
 * planner without them misjudges every table as tiny (it sorted all 100,000 probes of a project
 * for each page of their list instead of reading the list's index). The service runs `ANALYZE`
 * itself: when it starts and every {@link STATISTICS_EVERY_MS} after. PostgreSQL's own
 * autovacuum does this for a server database, unless it is turned off there: then the service
 * does it too, and says so once (with autovacuum off and 200,000 probes never analyzed, a
 * runner's recording statement took 29 s on a plan for a tiny table and was cancelled, again
 * and again: no run was recorded).
 *
 * @module
 */
import { sql } from "kysely";
import type { DatabaseHandle, Db } from "./database.ts";
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

/** What keeps the statistics, and why the service does it: "embedded" or "autovacuum off". */
export interface StatisticsKeeper {
  why: "embedded" | "autovacuum off";
  stop(): Promise<void>;
}

/**
 * Keeps the statistics where nothing else does: always on the embedded database, and on a
 * PostgreSQL server whose autovacuum is off; null where autovacuum does it. The process that
 * starts it says so (`warnAutovacuumOff`), once, not every app a test builds.
 */
export async function keepStatisticsIfNeeded(
  { handle, log, everyMs }: { handle: DatabaseHandle; log: Logger; everyMs?: number },
): Promise<StatisticsKeeper | null> {
  let why: StatisticsKeeper["why"] = "embedded";
  if (handle.kind === "postgres") {
    const { rows: [row] } = await sql<{ autovacuum: string }>`show autovacuum`.execute(handle.db);
    if (row?.autovacuum !== "off") return null;
    why = "autovacuum off";
  }
  return { why, ...keepStatistics({ db: handle.db, log, everyMs }) };
}

/** The warning of a process whose PostgreSQL server has autovacuum off. */
export function warnAutovacuumOff(keeper: StatisticsKeeper | null, log: Logger): void {
  if (keeper?.why !== "autovacuum off") return;
  log.warn(
    "autovacuum is off on the PostgreSQL server: the service refreshes the planner's " +
      "statistics itself (ANALYZE every 5 minutes); turn autovacuum on to leave it to the server",
  );
}
