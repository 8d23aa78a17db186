/**
 * Background pruning in small batches: raw results past the retention, rollups past 400 days,
 * and the history of deleted probes. Each batch is its own short statement, and rows another
 * runner is pruning are skipped, so several runners may prune at once without waiting.
 *
 * @module
 */
import { sql } from "kysely";
import { type Db, withBudget } from "../db/database.ts";

export const ROLLUP_RETENTION_DAYS = 400;
const DAY_MS = 86_400_000;

export interface PruneReport {
  results: number;
  rollups: number;
  /** Deleted probes whose history is now gone. */
  probes: number;
}

export interface PruneOptions {
  now: number;
  retentionDays: number;
  rollupRetentionDays?: number;
  batch?: number;
  /** Between batches: a pause, so pruning never holds the database for long. */
  pause?: () => Promise<void>;
  /** Checked between batches: pruning stops early when the runner stops. */
  stopped?: () => boolean;
}

async function inBatches(
  run: () => Promise<number>,
  { batch, pause, stopped }: { batch: number; pause: () => Promise<void>; stopped: () => boolean },
): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await run();
    total += n;
    if (n < batch || stopped()) return total;
    await pause();
  }
}

const affected = (r: { numAffectedRows?: bigint }) => Number(r.numAffectedRows ?? 0);

/**
 * One pruning pass; returns what it removed. On PostgreSQL it runs on the runner's connections,
 * with the runner's budget (`BUDGETS.runner`) rather than a request's deadline.
 */
export async function pruneOnce(database: Db, options: PruneOptions): Promise<PruneReport> {
  const db = withBudget(database, "runner");
  const batch = options.batch ?? 1000;
  const loop = {
    batch,
    pause: options.pause ?? (() => new Promise<void>((r) => setTimeout(r, 10))),
    stopped: options.stopped ?? (() => false),
  };
  const resultsBefore = new Date(options.now - options.retentionDays * DAY_MS).toISOString();
  const rollupsBefore = new Date(
    options.now - (options.rollupRetentionDays ?? ROLLUP_RETENTION_DAYS) * DAY_MS,
  ).toISOString();

  const results = await inBatches(async () =>
    affected(
      await sql`
      delete from probe_results where id in (
        select id from probe_results where started_at < ${resultsBefore}
        limit ${batch} for update skip locked)`.execute(db),
    ), loop);

  const rollups = await inBatches(async () =>
    affected(
      await sql`
      delete from probe_rollups where (probe_key, hour) in (
        select probe_key, hour from probe_rollups where hour < ${rollupsBefore}
        limit ${batch} for update skip locked)`.execute(db),
    ), loop);

  let probes = 0;
  const tombstones = await db.selectFrom("probe_tombstones").select("probe_key")
    .orderBy("probe_key").limit(100).execute();
  for (const { probe_key } of tombstones) {
    if (loop.stopped()) break;
    const key = String(probe_key);
    await inBatches(async () =>
      affected(
        await sql`
        delete from probe_results where id in (
          select id from probe_results where probe_key = ${key} limit ${batch})`.execute(db),
      ), loop);
    await inBatches(async () =>
      affected(
        await sql`
        delete from probe_rollups where (probe_key, hour) in (
          select probe_key, hour from probe_rollups where probe_key = ${key} limit ${batch})`
          .execute(db),
      ), loop);
    if (loop.stopped()) break;
    await db.deleteFrom("probe_tombstones").where("probe_key", "=", key).execute();
    probes++;
  }
  return { results, rollups, probes };
}
