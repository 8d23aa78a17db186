// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Alerting (issue 11): what a run must show (`expect`), each probe's state, incidents, the alert
// policy and its per-project overrides, maintenance windows, named notification targets, and the
// outbox every notification goes through.

export async function up(db: Kysely<any>): Promise<void> {
  // What "working" means for a probe, and a name for it in messages and lists.
  await db.schema.alterTable("probes")
    .addColumn("label", "text")
    .addColumn("expect", "json")
    .execute();

  // Which assertions a run failed (and, for failing runs, what was seen); why it ran; whether it
  // ran inside a maintenance window (decided when it starts).
  await db.schema.alterTable("probe_results")
    .addColumn("failed_checks", "json")
    .addColumn("trigger", "text", (c) => c.notNull().defaultTo("schedule"))
    .addColumn("in_maintenance", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`alter table probe_results add constraint probe_results_trigger_check
            check (trigger in ('schedule', 'manual'))`.execute(db);

  // Runs in maintenance are counted apart: not in the outcome counts, so not in uptime.
  await db.schema.alterTable("probe_rollups")
    .addColumn("maintenance", "integer", (c) => c.notNull().defaultTo(0))
    .execute();

  // A probe's state sits on its schedule row, which every recorded run updates already: the state
  // moves in the same statement, in the same transaction as the result it comes from.
  await db.schema.alterTable("probe_schedule")
    .addColumn("state", "text", (c) => c.notNull().defaultTo("unknown"))
    .addColumn("state_since", "timestamptz")
    .addColumn("fail_streak", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("pass_streak", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("manual_run_at", "timestamptz")
    .execute();
  await sql`alter table probe_schedule add constraint probe_schedule_state_check
            check (state in ('unknown', 'up', 'degraded', 'down'))`.execute(db);

  // Incidents outlive their probe (and its project: the archive keeps them), so no foreign key.
  await db.schema
    .createTable("incidents")
    .addColumn("id", "bigint", (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("project", "text", (c) => c.notNull())
    .addColumn("probe_key", "bigint", (c) => c.notNull())
    .addColumn("probe_id", "text", (c) => c.notNull())
    .addColumn("label", "text", (c) => c.notNull())
    .addColumn("started_at", "timestamptz", (c) => c.notNull())
    .addColumn("cause", "text", (c) => c.notNull())
    .addColumn("runs_failed", "integer", (c) => c.notNull())
    .addColumn("last_error", "text")
    .addColumn("resolved_at", "timestamptz")
    .addColumn("resolution", "text")
    .addColumn("acknowledged_at", "timestamptz")
    .addColumn("next_reminder_at", "timestamptz")
    .addCheckConstraint(
      "incidents_resolution_check",
      sql`resolution in ('recovered', 'changed', 'deleted', 'disabled')`,
    )
    .execute();
  // At most one open incident per probe: opening a second one is a unique violation.
  await sql`create unique index incidents_open_probe_idx on incidents (probe_key)
            where resolved_at is null`.execute(db);
  await sql`create index incidents_newest_idx on incidents (id desc)`.execute(db);
  await sql`create index incidents_project_idx on incidents (project, id desc)`.execute(db);
  await sql`create index incidents_reminder_idx on incidents (next_reminder_at)
            where resolved_at is null and next_reminder_at is not null`.execute(db);

  await db.schema
    .createTable("alert_settings")
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn("enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("targets", "json", (c) => c.notNull().defaultTo(sql`'["log"]'::json`))
    .addColumn("failure_threshold", "integer", (c) => c.notNull().defaultTo(3))
    .addColumn("success_threshold", "integer", (c) => c.notNull().defaultTo(2))
    .addColumn("reminder_minutes", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("notify_degraded", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("notify_recovered", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`insert into alert_settings (id) values (1)`.execute(db);

  // Per-project overrides: null inherits the global policy.
  await db.schema
    .createTable("project_alerts")
    .addColumn(
      "project",
      "text",
      (c) => c.primaryKey().references("projects.name").onDelete("cascade"),
    )
    .addColumn("enabled", "boolean")
    .addColumn("targets", "json")
    .addColumn("failure_threshold", "integer")
    .addColumn("success_threshold", "integer")
    .addColumn("reminder_minutes", "integer")
    .addColumn("notify_degraded", "boolean")
    .addColumn("notify_recovered", "boolean")
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable("maintenance_windows")
    .addColumn("id", "bigint", (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn(
      "project",
      "text",
      (c) => c.notNull().references("projects.name").onDelete("cascade"),
    )
    .addColumn("starts_at", "timestamptz", (c) => c.notNull())
    .addColumn("ends_at", "timestamptz", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint("maintenance_windows_order_check", sql`ends_at > starts_at`)
    .execute();
  await sql`create index maintenance_windows_project_idx
            on maintenance_windows (project, ends_at)`.execute(db);

  // Named targets. `secret` holds what is never read back: a webhook's signing key, the whole URL
  // of a Slack or Discord target.
  await db.schema
    .createTable("notification_targets")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("config", "json", (c) => c.notNull())
    .addColumn("secret", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      "notification_targets_kind_check",
      sql`kind in ('webhook', 'slack', 'discord', 'mail')`,
    )
    .execute();

  // The outbox: written in the transaction that decides to notify, delivered at least once by
  // whichever instance claims it first; `id` is the stable `webhook-id` receivers drop repeats by.
  await db.schema
    .createTable("notifications")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("target", "text", (c) => c.notNull())
    .addColumn("incident_id", "bigint")
    .addColumn("payload", "json", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("claimed_by", "text")
    .addColumn("claimed_until", "timestamptz")
    .addColumn("last_error", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("delivered_at", "timestamptz")
    .addCheckConstraint(
      "notifications_status_check",
      sql`status in ('pending', 'delivered', 'failed')`,
    )
    .execute();
  await sql`create index notifications_due_idx on notifications (next_attempt_at)
            where status = 'pending'`.execute(db);
  await sql`create index notifications_incident_idx on notifications (incident_id)
            where incident_id is not null`.execute(db);

  await db.schema
    .createTable("notification_attempts")
    .addColumn("id", "bigint", (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn(
      "notification_id",
      "text",
      (c) => c.notNull().references("notifications.id").onDelete("cascade"),
    )
    .addColumn("attempted_at", "timestamptz", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("instance_id", "text", (c) => c.notNull())
    .execute();
  await sql`create index notification_attempts_notification_idx
            on notification_attempts (notification_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (
    const table of [
      "notification_attempts",
      "notifications",
      "notification_targets",
      "maintenance_windows",
      "project_alerts",
      "alert_settings",
      "incidents",
    ]
  ) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable("probe_schedule").dropConstraint("probe_schedule_state_check")
    .execute();
  await db.schema.alterTable("probe_schedule")
    .dropColumn("state").dropColumn("state_since").dropColumn("fail_streak")
    .dropColumn("pass_streak").dropColumn("manual_run_at").execute();
  await db.schema.alterTable("probe_rollups").dropColumn("maintenance").execute();
  await db.schema.alterTable("probe_results").dropConstraint("probe_results_trigger_check")
    .execute();
  await db.schema.alterTable("probe_results")
    .dropColumn("failed_checks").dropColumn("trigger").dropColumn("in_maintenance").execute();
  await db.schema.alterTable("probes").dropColumn("label").dropColumn("expect").execute();
}
