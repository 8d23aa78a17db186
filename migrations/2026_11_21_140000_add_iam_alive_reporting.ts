// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.

export async function up(db: Kysely<any>): Promise<void> {
  // The reporting state sits on the settings row, so one row lock claims a report.
  // next_report_at null means "due at once": enabling or changing the schedule sets it so.
  await db.schema
    .alterTable("iam_alive_settings")
    .addColumn("report_sequence", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("last_report_at", "timestamptz")
    .addColumn("next_report_at", "timestamptz")
    .execute();

  await db.schema
    .createTable("iam_alive_deliveries")
    .addColumn("id", "integer", (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addColumn("trigger", "text", (c) => c.notNull())
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("started_at", "timestamptz", (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addCheckConstraint("iam_alive_deliveries_trigger_check", sql`trigger in ('schedule', 'test')`)
    .addCheckConstraint(
      "iam_alive_deliveries_outcome_check",
      sql`outcome in ('delivered', 'failed', 'not_configured')`,
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("iam_alive_deliveries").execute();
  await db.schema
    .alterTable("iam_alive_settings")
    .dropColumn("next_report_at")
    .dropColumn("last_report_at")
    .dropColumn("report_sequence")
    .execute();
}
