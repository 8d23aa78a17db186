// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Verdicts by quorum (issue 21): each (probe, location) keeps its own state and streaks on its
// schedule row; the probe's state is decided from them here.
// - alert_settings.location_quorum (and a project's override, null inheriting): how many of a
//   probe's locations must be down for it to be down; 0 is "majority".
// - probe_verdicts: (no foreign key, as incidents have none: a recording transaction holding
//   schedule rows must not wait for a probe row a project delete holds) the probe's state, when it came, when one of its locations turns stale (no
//   result for three intervals: the sweep decides again then), and the locations at the last
//   decision. Existing probes start with their built-in location's state.
// - incidents.locations: the locations failing, fine and unknown, as the incident last saw them.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table alert_settings add column location_quorum integer not null default 0
    constraint alert_settings_location_quorum_range check (location_quorum between 0 and 16)`
    .execute(db);
  await sql`alter table project_alerts add column location_quorum integer
    constraint project_alerts_location_quorum_range check (location_quorum between 0 and 16)`
    .execute(db);
  await sql`
    create table probe_verdicts (
      probe_key bigint primary key,
      state text not null default 'unknown'
        constraint probe_verdicts_state_check check (state in ('unknown', 'up', 'degraded', 'down')),
      state_since timestamptz,
      stale_at timestamptz,
      locations json
    )`.execute(db);
  await sql`create index probe_verdicts_stale_idx on probe_verdicts (stale_at)
    where stale_at is not null`.execute(db);
  await sql`insert into probe_verdicts (probe_key, state, state_since)
    select probe_key, state, state_since from probe_schedule where location = ''`.execute(db);
  await sql`alter table incidents add column locations json`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table incidents drop column locations`.execute(db);
  await sql`drop table probe_verdicts`.execute(db);
  await sql`alter table project_alerts drop column location_quorum`.execute(db);
  await sql`alter table alert_settings drop column location_quorum`.execute(db);
}
