// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// A heartbeat is watched through a probe row of its own (`heartbeat://<name>`), so states,
// incidents, notifications, rollups and charts work for it unchanged; its own settings and ping
// state live here. Its probe's interval is the heartbeat's longest silence, which may pass a
// day: the probes' range check lets heartbeat URLs through. `success_deadline` is when a success
// is due; `next_deadline` the first of it and an open start's end, which the watch looks up.
// `heartbeat_pings` keeps each heartbeat's recent pings, numbered per heartbeat (`n`), so the
// oldest are cut by number.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table probes drop constraint probes_interval_seconds_range`.execute(db);
  await sql`alter table probes add constraint probes_interval_seconds_range
    check (interval_seconds between 10 and 86400 or url like 'heartbeat://%')`.execute(db);
  await db.schema.createTable("heartbeats")
    .addColumn(
      "probe_key",
      "bigint",
      (c) => c.primaryKey().references("probes.key").onDelete("cascade"),
    )
    .addColumn("project", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("token", "text", (c) => c.notNull().unique())
    .addColumn("period_seconds", "integer")
    .addColumn("schedule", "text")
    .addColumn("timezone", "text")
    .addColumn("grace_seconds", "integer", (c) => c.notNull())
    .addColumn("max_duration_seconds", "integer")
    .addColumn("min_duration_seconds", "integer")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("last_ping_at", "timestamptz")
    .addColumn("last_ping_kind", "text")
    .addColumn("last_success_at", "timestamptz")
    .addColumn("last_start_at", "timestamptz")
    .addColumn("last_duration_ms", "integer")
    .addColumn("success_deadline", "timestamptz", (c) => c.notNull())
    .addColumn("next_deadline", "timestamptz", (c) => c.notNull())
    .addColumn("pings_total", "bigint", (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint("heartbeats_project_name_key", ["project", "name"])
    .addCheckConstraint(
      "heartbeats_timing_check",
      sql`(period_seconds is null) <> (schedule is null) and
          (schedule is null) = (timezone is null)`,
    )
    .execute();
  await sql`create index heartbeats_deadline_idx on heartbeats (next_deadline)`.execute(db);
  await db.schema.createTable("heartbeat_pings")
    .addColumn(
      "heartbeat_key",
      "bigint",
      (c) => c.notNull().references("heartbeats.probe_key").onDelete("cascade"),
    )
    .addColumn("n", "bigint", (c) => c.notNull())
    .addColumn("at", "timestamptz", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("exit_code", "integer")
    .addColumn("method", "text", (c) => c.notNull())
    .addColumn("address", "text")
    .addColumn("body", "text")
    .addColumn("body_bytes", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("heartbeat_pings_pkey", ["heartbeat_key", "n"])
    .addCheckConstraint(
      "heartbeat_pings_kind_check",
      sql`kind in ('success', 'start', 'fail', 'log', 'exit')`,
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("heartbeat_pings").execute();
  await db.schema.dropTable("heartbeats").execute();
  await sql`delete from probes where url like 'heartbeat://%'`.execute(db);
  await sql`alter table probes drop constraint probes_interval_seconds_range`.execute(db);
  await sql`alter table probes add constraint probes_interval_seconds_range
    check (interval_seconds between 10 and 86400)`.execute(db);
}
