// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Issue 19: raw results partitioned by day (UTC) on `started_at`, so that the retention drops a
// day's partition whole instead of deleting its rows one by one. The primary key includes the
// partition key, as PostgreSQL requires: (id, started_at). `id` stays unique on its own in
// practice (one identity sequence), and nothing looks a result up by `id` alone.
//
// A default partition takes any row outside every daily partition (a clock far ahead, a restore
// of old results), so an insert never fails for want of a partition; the maintenance
// (server/runner/partitions.ts) moves such rows into their day's partition when it creates it.
//
// The existing rows are kept: the table is renamed, the partitioned one created with a partition
// for every day that has rows (and today and the next 7), the rows copied with their ids, and the
// old table dropped.
//
// And the tombstones of deleted probes (whose history the runners then remove, see
// server/runner/prune.ts) are written once per statement rather than once per row: deleting a
// project of 100,000 probes took a second less.

const DAY_MS = 86_400_000;
const AHEAD_DAYS = 7;

const COLUMNS = `id, probe_key, due_at, started_at, duration_ms, outcome, http_status, error,
  address, runner, failed_checks, trigger, in_maintenance`;

/** `probe_results_p20261125`: the partition of that UTC day. */
const partitionName = (day: number) =>
  `probe_results_p${new Date(day).toISOString().slice(0, 10).replaceAll("-", "")}`;

async function createDay(db: Kysely<any>, day: number): Promise<void> {
  await sql`create table if not exists ${sql.raw(partitionName(day))} partition of probe_results
    for values from (${sql.lit(new Date(day).toISOString())})
    to (${sql.lit(new Date(day + DAY_MS).toISOString())})`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table probe_results rename to probe_results_unpartitioned`.execute(db);
  await sql`alter table probe_results_unpartitioned
    rename constraint probe_results_pkey to probe_results_unpartitioned_pkey`.execute(db);
  await sql`drop index probe_results_probe_started_idx`.execute(db);
  await sql`drop index probe_results_started_idx`.execute(db);

  await sql`
    create table probe_results (
      id bigint generated always as identity,
      probe_key bigint not null,
      due_at timestamptz not null,
      started_at timestamptz not null,
      duration_ms integer not null,
      outcome text not null,
      http_status integer,
      error text,
      address text,
      runner text not null,
      failed_checks json,
      trigger text not null default 'schedule',
      in_maintenance boolean not null default false,
      constraint probe_results_outcome_check
        check (outcome in ('up', 'degraded', 'down', 'blocked')),
      constraint probe_results_trigger_check check (trigger in ('schedule', 'manual')),
      constraint probe_results_pkey primary key (id, started_at)
    ) partition by range (started_at)`.execute(db);
  await sql`create table probe_results_default partition of probe_results default`.execute(db);

  const { rows: [span] } = await sql<{ first: Date | string | null; last: Date | string | null }>`
    select min(started_at) as first, max(started_at) as last
    from probe_results_unpartitioned`.execute(db);
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const days = new Set<number>();
  for (let d = today; d <= today + AHEAD_DAYS * DAY_MS; d += DAY_MS) days.add(d);
  if (span.first !== null && span.last !== null) {
    // Every day between the first and the last row: at most the retention (400 days) apart,
    // unless clocks were wrong; days past a year either side of today go to the default.
    const from = Math.max(
      Math.floor(new Date(span.first).getTime() / DAY_MS) * DAY_MS,
      today - 400 * DAY_MS,
    );
    const to = Math.min(new Date(span.last).getTime(), today + 366 * DAY_MS);
    for (let d = from; d <= to; d += DAY_MS) days.add(d);
  }
  for (const day of [...days].sort((a, b) => a - b)) await createDay(db, day);

  await sql`insert into probe_results (${sql.raw(COLUMNS)}) overriding system value
    select ${sql.raw(COLUMNS)} from probe_results_unpartitioned`.execute(db);
  await sql`select setval(pg_get_serial_sequence('probe_results', 'id'),
    coalesce((select max(id) from probe_results), 0) + 1, false)`.execute(db);
  await sql`drop table probe_results_unpartitioned`.execute(db);

  // Created on the parent, so every partition (and every later one) has them.
  await sql`create index probe_results_probe_started_idx
    on probe_results (probe_key, started_at desc)`.execute(db);
  await sql`create index probe_results_started_idx on probe_results (started_at)`.execute(db);

  await sql`drop trigger probes_tombstone on probes`.execute(db);
  await sql`
    create or replace function probe_tombstone() returns trigger language plpgsql as $$
    begin
      insert into probe_tombstones (probe_key) select key from deleted_probes
      on conflict do nothing;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger probes_tombstone after delete on probes
    referencing old table as deleted_probes
    for each statement execute function probe_tombstone()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger probes_tombstone on probes`.execute(db);
  await sql`
    create or replace function probe_tombstone() returns trigger language plpgsql as $$
    begin
      insert into probe_tombstones (probe_key) values (old.key) on conflict do nothing;
      return old;
    end
    $$`.execute(db);
  await sql`
    create trigger probes_tombstone after delete on probes
    for each row execute function probe_tombstone()`.execute(db);
  await sql`alter table probe_results rename to probe_results_partitioned`.execute(db);
  await sql`alter table probe_results_partitioned
    rename constraint probe_results_pkey to probe_results_partitioned_pkey`.execute(db);
  await sql`drop index probe_results_probe_started_idx`.execute(db);
  await sql`drop index probe_results_started_idx`.execute(db);
  await sql`
    create table probe_results (
      id bigint primary key generated always as identity,
      probe_key bigint not null,
      due_at timestamptz not null,
      started_at timestamptz not null,
      duration_ms integer not null,
      outcome text not null,
      http_status integer,
      error text,
      address text,
      runner text not null,
      failed_checks json,
      trigger text not null default 'schedule',
      in_maintenance boolean not null default false,
      constraint probe_results_outcome_check
        check (outcome in ('up', 'degraded', 'down', 'blocked')),
      constraint probe_results_trigger_check check (trigger in ('schedule', 'manual'))
    )`.execute(db);
  await sql`insert into probe_results (${sql.raw(COLUMNS)}) overriding system value
    select ${sql.raw(COLUMNS)} from probe_results_partitioned`.execute(db);
  await sql`select setval(pg_get_serial_sequence('probe_results', 'id'),
    coalesce((select max(id) from probe_results), 0) + 1, false)`.execute(db);
  await sql`drop table probe_results_partitioned`.execute(db);
  await sql`create index probe_results_probe_started_idx
    on probe_results (probe_key, started_at desc)`.execute(db);
  await sql`create index probe_results_started_idx on probe_results (started_at)`.execute(db);
}
