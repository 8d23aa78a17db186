// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Escalation steps of the alert policy (a JSON list of {after_minutes, targets}; a project's null
// inherits the global one), and on each incident how many steps were sent and when the next is
// due. The escalation loop claims due incidents by that time, so the index holds only the open,
// unacknowledged incidents that still have a step to come.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table alert_settings add column escalation json not null default '[]'::json`
    .execute(db);
  await sql`alter table project_alerts add column escalation json`.execute(db);
  await sql`alter table incidents add column escalation_step integer not null default 0`
    .execute(db);
  await sql`alter table incidents add column next_escalation_at timestamptz`.execute(db);
  await sql`create index incidents_escalation_idx on incidents (next_escalation_at)
            where resolved_at is null and acknowledged_at is null
              and next_escalation_at is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index incidents_escalation_idx`.execute(db);
  await sql`alter table incidents drop column next_escalation_at`.execute(db);
  await sql`alter table incidents drop column escalation_step`.execute(db);
  await sql`alter table project_alerts drop column escalation`.execute(db);
  await sql`alter table alert_settings drop column escalation`.execute(db);
}
