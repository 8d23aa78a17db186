/**
 * The daily partitions of `probe_results` (migration 2026_11_25_110000): created ahead, and
 * dropped whole once their day is past the retention. Run by the runner's prune loop
 * (`pruneOnce`) and at start-up (`migrateToLatest`).
 *
 * - One partition per UTC day of `started_at`, named `probe_results_pYYYYMMDD`.
 * - Created for today and the next `PARTITION_AHEAD_DAYS` days, so a runner down for less than
 *   that still finds tomorrow's partition.
 * - `probe_results_default` takes any row outside every daily partition, so no insert ever fails
 *   for want of a partition and no acknowledged result is lost. When the partition of a day that
 *   has rows in the default partition is created, those rows move into it in the same transaction.
 *   Rows in the default partition past the retention are deleted in batches (`pruneOnce`).
 * - A daily partition is dropped when its whole day is past the retention: raw results are so
 *   kept between `RESULTS_RETENTION_DAYS` and one day more.
 *
 * Creating and dropping a partition lock `probe_results` briefly; each waits at most
 * `LOCK_TIMEOUT_MS` for the lock (so recording never waits long behind it) and is tried again on
 * the next pass when it could not get it. An advisory lock keeps two runners from doing the same.
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "./database.ts";

export const DAY_MS = 86_400_000;
/** Days after today that have their partition already. */
export const PARTITION_AHEAD_DAYS = 7;
export const DEFAULT_PARTITION = "probe_results_default";
/** The longest a partition's creation or drop waits for its locks. */
export const LOCK_TIMEOUT_MS = 1000;
/** Taken (per transaction) by whoever creates or drops partitions. */
const MAINTENANCE_LOCK = 0x70617274; // "part"

/** The start of the UTC day `at` is in. */
export const dayOf = (at: number) => Math.floor(at / DAY_MS) * DAY_MS;

/** `probe_results_p20261125`: the partition of the UTC day starting at `day`. */
export const partitionName = (day: number) =>
  `probe_results_p${new Date(day).toISOString().slice(0, 10).replaceAll("-", "")}`;

const NAMED = /^probe_results_p(\d{4})(\d{2})(\d{2})$/;

/** The daily partitions that exist, by the start of their day, oldest first. */
export async function listPartitions(db: Db): Promise<number[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'probe_results'::regclass`.execute(db);
  const days: number[] = [];
  for (const { name } of rows) {
    const m = NAMED.exec(name);
    if (m) days.push(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  }
  return days.sort((a, b) => a - b);
}

/**
 * Creates the partition of one day, moving the rows of that day out of the default partition;
 * true when it created it, false when it existed already.
 */
export function createPartition(db: Db, day: number): Promise<boolean> {
  const name = sql.raw(partitionName(day));
  const from = sql.lit(new Date(day).toISOString());
  const to = sql.lit(new Date(day + DAY_MS).toISOString());
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('lock_timeout', ${String(LOCK_TIMEOUT_MS)}, true)`.execute(trx);
    await sql`select pg_advisory_xact_lock(${MAINTENANCE_LOCK})`.execute(trx);
    const { rows: [known] } = await sql<{ found: boolean }>`
      select to_regclass(${partitionName(day)}) is not null as found`.execute(trx);
    if (known.found) return false;
    const { rows: [held] } = await sql<{ any: boolean }>`
      select exists (select 1 from probe_results_default
        where started_at >= ${from} and started_at < ${to}) as any`.execute(trx);
    if (!held.any) {
      await sql`create table ${name} partition of probe_results
        for values from (${from}) to (${to})`.execute(trx);
      return true;
    }
    // A partition cannot be created over rows the default partition holds: fill a table
    // first, then attach it (which checks its rows and builds its indexes).
    await sql`create table ${name}
      (like probe_results including defaults including constraints)`.execute(trx);
    await sql`
      with moved as (
        delete from probe_results_default
        where started_at >= ${from} and started_at < ${to} returning *)
      insert into ${name} select * from moved`.execute(trx);
    await sql`alter table probe_results attach partition ${name}
      for values from (${from}) to (${to})`.execute(trx);
    return true;
  });
}

/** Drops a day's partition (and its rows); false when it was gone already. */
export function dropPartition(db: Db, day: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('lock_timeout', ${String(LOCK_TIMEOUT_MS)}, true)`.execute(trx);
    await sql`select pg_advisory_xact_lock(${MAINTENANCE_LOCK})`.execute(trx);
    const { rows: [known] } = await sql<{ found: boolean }>`
      select to_regclass(${partitionName(day)}) is not null as found`.execute(trx);
    if (!known.found) return false;
    await sql`drop table ${sql.raw(partitionName(day))}`.execute(trx);
    return true;
  });
}

export interface PartitionReport {
  created: number;
  dropped: number;
}

/**
 * Creates the partitions of today and the days ahead, and of every day within the retention
 * that has rows in the default partition; drops those whose whole day is past the retention
 * (when `retentionDays` is given).
 */
export async function maintainPartitions(
  db: Db,
  { now, retentionDays, aheadDays = PARTITION_AHEAD_DAYS }: {
    now: number;
    retentionDays?: number;
    aheadDays?: number;
  },
): Promise<PartitionReport> {
  const report: PartitionReport = { created: 0, dropped: 0 };
  const today = dayOf(now);
  const cutoff = retentionDays === undefined ? undefined : now - retentionDays * DAY_MS;
  const existing = await listPartitions(db);
  if (cutoff !== undefined) {
    for (const day of existing) {
      if (day + DAY_MS <= cutoff && await dropPartition(db, day)) report.dropped++;
    }
  }
  const wanted = new Set<number>();
  for (let d = today; d <= today + aheadDays * DAY_MS; d += DAY_MS) wanted.add(d);
  // Days the default partition holds rows of (normally none: rows land there only when no
  // partition was ready, or from a restore), within the retention and up to a year ahead.
  const { rows } = await sql<{ day: string | number }>`
    select distinct floor(extract(epoch from started_at) / 86400)::bigint * 86400000 as day
    from probe_results_default
    where started_at >= ${new Date(cutoff ?? today - DAY_MS)}
      and started_at < ${new Date(today + 366 * DAY_MS)}`.execute(db);
  for (const { day } of rows) wanted.add(Number(day));
  const have = new Set(existing);
  for (const day of [...wanted].sort((a, b) => a - b)) {
    if (!have.has(day) && await createPartition(db, day)) report.created++;
  }
  return report;
}
