// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Everything hangs off probes.key, the internal identity that survives changes of probe_id.

export async function up(db: Kysely<any>): Promise<void> {
  // One row per probe: when it is next due, and who holds it while it runs. Deleting a probe
  // (or its project) deletes its row in the same transaction, so it stops at once.
  await db.schema
    .createTable("probe_schedule")
    .addColumn(
      "probe_key",
      "bigint",
      (c) => c.primaryKey().references("probes.key").onDelete("cascade"),
    )
    .addColumn("next_due_at", "timestamptz", (c) => c.notNull())
    .addColumn("lease_until", "timestamptz")
    .addColumn("leased_by", "text")
    .addColumn("last_run_at", "timestamptz")
    .addColumn("last_outcome", "text")
    .execute();
  await db.schema.createIndex("probe_schedule_due_idx").on("probe_schedule")
    .column("next_due_at").execute();

  // Raw results, kept RESULTS_RETENTION_DAYS. No foreign key: deleting a probe must not wait
  // for its history to go; the pruner removes that in batches (see probe_tombstones).
  await db.schema
    .createTable("probe_results")
    .addColumn("id", "bigint", (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("probe_key", "bigint", (c) => c.notNull())
    .addColumn("due_at", "timestamptz", (c) => c.notNull())
    .addColumn("started_at", "timestamptz", (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("http_status", "integer")
    .addColumn("error", "text")
    .addColumn("address", "text")
    .addColumn("runner", "text", (c) => c.notNull())
    .addCheckConstraint(
      "probe_results_outcome_check",
      sql`outcome in ('up', 'degraded', 'down', 'blocked')`,
    )
    .execute();
  await db.schema.createIndex("probe_results_probe_started_idx").on("probe_results")
    .columns(["probe_key", "started_at desc"]).execute();
  await db.schema.createIndex("probe_results_started_idx").on("probe_results")
    .column("started_at").execute();

  // Hourly rollups, kept 400 days: counts per outcome and a fixed-bucket latency histogram
  // (server/runner/histogram.ts) over the runs that got an HTTP response.
  await db.schema
    .createTable("probe_rollups")
    .addColumn("probe_key", "bigint", (c) => c.notNull())
    .addColumn("hour", "timestamptz", (c) => c.notNull())
    .addColumn("up", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("degraded", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("down", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("blocked", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("latency_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("latency_max", "integer")
    .addColumn("latency_buckets", sql`integer[]`, (c) => c.notNull())
    .addPrimaryKeyConstraint("probe_rollups_pkey", ["probe_key", "hour"])
    .execute();
  await db.schema.createIndex("probe_rollups_hour_idx").on("probe_rollups")
    .column("hour").execute();

  // Keys of deleted probes whose results and rollups the pruner has still to remove.
  await db.schema
    .createTable("probe_tombstones")
    .addColumn("probe_key", "bigint", (c) => c.primaryKey())
    .addColumn("deleted_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`
    create function probe_tombstone() returns trigger language plpgsql as $$
    begin
      insert into probe_tombstones (probe_key) values (old.key) on conflict do nothing;
      return old;
    end
    $$`.execute(db);
  await sql`
    create trigger probes_tombstone after delete on probes
    for each row execute function probe_tombstone()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists probes_tombstone on probes`.execute(db);
  await sql`drop function if exists probe_tombstone()`.execute(db);
  await db.schema.dropTable("probe_tombstones").execute();
  await db.schema.dropTable("probe_rollups").execute();
  await db.schema.dropTable("probe_results").execute();
  await db.schema.dropTable("probe_schedule").execute();
}
