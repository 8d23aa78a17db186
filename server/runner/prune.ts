/**
 * Background pruning: daily partitions of raw results dropped whole past the retention (and
 * created ahead, `partitions.ts`); in small batches, rollups past 400 days, raw results left in
 * the default partition past the retention, and the history of deleted probes. Each batch is its
 * own short statement, and rows another runner is pruning are skipped, so several runners may
 * prune at once without waiting.
 *
 * @module
 */
import { sql } from "kysely";
import { type Db, withBudget } from "../storage/database.ts";
import { DAY_MS, maintainPartitions } from "../storage/partitions.ts";
import { DEFAULT_AUDIT_RETENTION_DAYS, pruneAuditLog } from "../domain/audit_log.ts";

export const ROLLUP_RETENTION_DAYS = 400;

export interface PruneReport {
  results: number;
  rollups: number;
  /** Deleted probes whose history is now gone. */
  probes: number;
  /** Daily partitions of raw results created, and dropped whole (`partitions.ts`). */
  partitionsCreated: number;
  partitionsDropped: number;
  /** Audit log entries past their retention. */
  audit: number;
}

export interface PruneOptions {
  now: number;
  retentionDays: number;
  rollupRetentionDays?: number;
  /** Days the audit log keeps an entry (`AUDIT_RETENTION_DAYS`). */
  auditRetentionDays?: number;
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

/** `{1,2,3}`: keys (digits only, read from the database) as one bigint[] parameter. */
const keyArray = (keys: readonly string[]) => `{${keys.join(",")}}`;

export interface PurgeReport {
  /** Deleted probes whose history is now gone. */
  probes: number;
  results: number;
  rollups: number;
}

export interface PurgeOptions {
  /** Rows one statement deletes at most. */
  batch?: number;
  /** Deleted probes worked on together. */
  keys?: number;
  pause?: () => Promise<void>;
  stopped?: () => boolean;
}

/**
 * Removes the raw results and rollups of deleted probes (`probe_tombstones`, written by a
 * trigger when a probe row is deleted), a few thousand rows per statement, `keys` probes at a
 * time; a probe's tombstone goes only once its rows are gone. Stopped part-way (the runner
 * stops, the process dies), the next call goes on where it was: the tombstones are the job.
 * Nothing reads a deleted probe's rows meanwhile: every read goes through `probes` for the key,
 * and keys are never reused (an identity column).
 */
export async function purgeDeleted(database: Db, options: PurgeOptions = {}): Promise<PurgeReport> {
  const db = withBudget(database, "runner");
  const batch = options.batch ?? 5000;
  const loop = {
    batch,
    pause: options.pause ?? (() => new Promise<void>((r) => setTimeout(r, 10))),
    stopped: options.stopped ?? (() => false),
  };
  const report: PurgeReport = { probes: 0, results: 0, rollups: 0 };
  let retries = 0;
  while (!loop.stopped()) {
    const tombstones = await db.selectFrom("probe_tombstones").select("probe_key")
      .orderBy("probe_key").limit(options.keys ?? 1000).execute();
    if (tombstones.length === 0) break;
    const keys = keyArray(tombstones.map((t) => String(t.probe_key)));
    // The rows to delete picked first, then each found by its index: `id = any(…)` in the
    // partitions between the first and last picked `started_at` (pruned at run time). A join on
    // `(id, started_at) in (select …)` was planned reading every partition whole, per batch.
    report.results += await inBatches(async () =>
      affected(
        await sql`
        with picked as materialized (
          select id, started_at from probe_results where probe_key = any(${keys}::bigint[])
          limit ${batch} for update skip locked)
        delete from probe_results
        where probe_key = any(${keys}::bigint[])
          and id = any(array(select id from picked))
          and started_at >= (select min(started_at) from picked)
          and started_at <= (select max(started_at) from picked)`.execute(db),
      ), loop);
    // Rollups (one table, not partitioned) by their row address, picked and locked first.
    report.rollups += await inBatches(async () =>
      affected(
        await sql`
        delete from probe_rollups
        where probe_key = any(${keys}::bigint[]) and ctid = any(array(
          select ctid from probe_rollups where probe_key = any(${keys}::bigint[])
          limit ${batch} for update skip locked))`.execute(db),
      ), loop);
    if (loop.stopped()) break;
    // A batch short of `batch` may have skipped rows another transaction held: another runner
    // deleting them, or the partition maintenance moving them out of the default partition
    // (they come back in their day's partition). The tombstones go only once nothing is left;
    // else this set is worked again, a few times, then left to the next pass.
    const { rows: [left] } = await sql<{ any: boolean }>`
      select exists (select 1 from probe_results where probe_key = any(${keys}::bigint[]))
          or exists (select 1 from probe_rollups where probe_key = any(${keys}::bigint[]))
        as any`.execute(db);
    if (left.any) {
      if (++retries > 5) break;
      await loop.pause();
      continue;
    }
    retries = 0;
    const done = await sql`delete from probe_tombstones where probe_key = any(${keys}::bigint[])`
      .execute(db);
    report.probes += affected(done);
    await loop.pause();
  }
  return report;
}

/**
 * One pruning pass; returns what it removed. On PostgreSQL it runs on the runner's connections,
 * with the runner's budget (`BUDGETS.runner`) rather than a request's deadline.
 *
 * Raw results live in daily partitions (`partitions.ts`): a day past the retention is dropped
 * whole, and only the rows of the default partition past it are deleted here, in batches.
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
      delete from probe_results_default
      where started_at < ${resultsBefore} and id = any(array(
        select id from probe_results_default where started_at < ${resultsBefore}
        limit ${batch} for update skip locked))`.execute(db),
    ), loop);

  const partitions = await maintainPartitions(db, {
    now: options.now,
    retentionDays: options.retentionDays,
  });

  const rollups = await inBatches(async () =>
    affected(
      await sql`
      delete from probe_rollups where (probe_key, hour) in (
        select probe_key, hour from probe_rollups where hour < ${rollupsBefore}
        limit ${batch} for update skip locked)`.execute(db),
    ), loop);

  // Claims of remote runners tell their runs' ids apart for a day (docs/locations.md); runners
  // not seen for a week leave the locations' read.
  const claimsBefore = new Date(options.now - DAY_MS).toISOString();
  await inBatches(async () =>
    affected(
      await sql`
      delete from location_claims where id = any(array(
        select id from location_claims where issued_at < ${claimsBefore}
        limit ${batch} for update skip locked))`.execute(db),
    ), loop);
  await sql`delete from location_runners
    where last_seen_at < ${new Date(options.now - 7 * DAY_MS).toISOString()}`.execute(db);

  const audit = await pruneAuditLog(db, {
    before: new Date(
      options.now - (options.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS) * DAY_MS,
    ),
    batch,
  });

  const purged = await purgeDeleted(db, { ...loop, batch });
  return {
    results: results + purged.results,
    rollups: rollups + purged.rollups,
    probes: purged.probes,
    partitionsCreated: partitions.created,
    partitionsDropped: partitions.dropped,
    audit,
  };
}
