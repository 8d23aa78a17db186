// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Schedules per probe (issue 19): a probe's own interval and timeout. Null is the service-wide
// setting (PROBE_INTERVAL_SECONDS, PROBE_TIMEOUT_MS), resolved when the runner claims a run, so
// that changing the setting moves every probe that has none of its own.
// `probe_schedule.due_by`: a change of interval that lands while a run of the probe is leased
// cannot move `next_due_at` (the run is recorded against it); it leaves the latest time the next
// run may be due here instead, and recording that run takes it into account and clears it.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table probes
      add column interval_seconds integer
        constraint probes_interval_seconds_range check (interval_seconds between 10 and 86400),
      add column timeout_ms integer
        constraint probes_timeout_ms_range check (timeout_ms between 100 and 120000)`
    .execute(db);
  await sql`alter table probe_schedule add column due_by timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table probe_schedule drop column due_by`.execute(db);
  await sql`alter table probes drop column interval_seconds, drop column timeout_ms`.execute(db);
}
