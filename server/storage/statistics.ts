/**
 * The embedded database has no autovacuum: nothing refreshes the planner's statistics, and a
 * planner without them misjudges every table as tiny (it sorted all 100,000 probes of a project
 * for each page of their list instead of reading the list's index). The service analyzes tables
 * itself, as autovacuum would: every one of its own tables when it starts (not the system
 * catalogs, which a plain `ANALYZE` also reads: most of its second on a new database), then every {@link CHECK_EVERY_MS} each
 * table changed by more than {@link ANALYZE_THRESHOLD} rows plus {@link ANALYZE_SCALE} of its
 * size since it was last analyzed (autovacuum's own defaults). PostgreSQL's autovacuum does this
 * for a server database, unless it is turned off there: then the service does it too, and says
 * so once.
 *
 * Why by changed rows and not on a slow timer: with autovacuum off, 100,000 new probes got their
 * schedules just after the start's `ANALYZE` had seen an empty table, and the runner's claims
 * ran for seconds on a plan for a tiny table: 2,500 runs in 20 s instead of 33,000, and a
 * project delete queued behind them answered 503 after its 120 s budget. Before that, with
 * 200,000 probes never analyzed, a runner's recording statement took 29 s and was cancelled
 * again and again: no run was recorded.
 *
 * @module
 */
import { sql } from "kysely";
import type { DatabaseHandle, Db } from "./database.ts";
import { errorFields, type Logger } from "../base/log.ts";

/** How often the tables' changes are looked at. */
export const CHECK_EVERY_MS = 10_000;
/** A table is analyzed again once more rows than this changed, plus `ANALYZE_SCALE` of its size. */
export const ANALYZE_THRESHOLD = 50;
export const ANALYZE_SCALE = 0.1;

/** The tables changed enough since they were last analyzed, as `schema.table` identifiers. */
export async function staleTables(db: Db): Promise<{ schema: string; table: string }[]> {
  // Counts of this connection's own changes are flushed at the end of its next transaction; the
  // embedded database (one backend, no idle time) flushes them no other way.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ schema: string; table: string }>`
    select s.schemaname as schema, s.relname as table
    from pg_stat_user_tables s join pg_class c on c.oid = s.relid
    where s.n_mod_since_analyze >
          ${ANALYZE_THRESHOLD} + ${ANALYZE_SCALE}::float8 * greatest(c.reltuples, 0)
    order by s.n_mod_since_analyze desc`.execute(db);
  return rows;
}

/** The service's own tables (plain and partitioned), as `schema.table` identifiers. */
export async function ownTables(db: Db): Promise<{ schema: string; table: string }[]> {
  const { rows } = await sql<{ schema: string; table: string }>`
    select n.nspname as schema, c.relname as table
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'p', 'm')
      and n.nspname not in ('pg_catalog', 'information_schema')
      and n.nspname !~ '^pg_(toast|temp)'
    order by 1, 2`.execute(db);
  return rows;
}

/** Analyzes the service's tables now, then the changed ones on a timer; returns what stops it. */
export function keepStatistics(
  { db, log, everyMs = CHECK_EVERY_MS }: { db: Db; log: Logger; everyMs?: number },
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  const run = (work: () => Promise<unknown>) => {
    if (busy) return;
    busy = true;
    running = work().then(
      () => {},
      (error) => log.warn("refreshing the planner's statistics failed", errorFields(error)),
    ).finally(() => busy = false);
  };
  run(async () => {
    const tables = await ownTables(db);
    if (tables.length === 0) return;
    await sql`analyze ${sql.join(tables.map(({ schema, table }) => sql.id(schema, table)))}`
      .execute(db);
  });
  const timer = setInterval(() =>
    run(async () => {
      for (const { schema, table } of await staleTables(db)) {
        await sql`analyze ${sql.id(schema, table)}`.execute(db);
      }
    }), everyMs);
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
    "autovacuum is off on the PostgreSQL server: the service analyzes its tables itself (each " +
      "once a tenth of it changed, as autovacuum would); turn autovacuum on to leave it to the server",
  );
}
