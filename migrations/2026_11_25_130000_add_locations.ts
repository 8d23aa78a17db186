// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Locations (issue 21): the places probes run from. The built-in location (the runners on the
// database, named by RUNNER_LOCATION) has no row and is stored as '' wherever a location is
// named, so that renaming it in the configuration keeps its schedules and history; remote
// locations have a row here, with their token stored only as its SHA-256 digest.
//
// - probes.locations: where a probe runs; null follows its project's default_locations, and a
//   null default is the built-in location alone.
// - probe_schedule: one row per (probe, location), each with its own due time, lease, state and
//   streaks; the existing rows are the built-in location's.
// - probe_results and probe_rollups carry the location; the existing rows are the built-in
//   location's (a constant default: no rewrite of the table on PostgreSQL 11 and later).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("locations")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("label", "text")
    .addColumn("kind", "text", (c) => c.notNull().defaultTo("remote"))
    .addColumn("token_sha256", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint("locations_kind_check", sql`kind in ('remote')`)
    .addCheckConstraint("locations_name_check", sql`name <> ''`)
    .addUniqueConstraint("locations_token_sha256_key", ["token_sha256"])
    .execute();

  await sql`alter table probes add column locations text[]
    constraint probes_locations_count check (cardinality(locations) between 1 and 16)`
    .execute(db);
  await sql`alter table projects add column default_locations text[]
    constraint projects_default_locations_count
      check (cardinality(default_locations) between 1 and 16)`.execute(db);

  await sql`alter table probe_schedule add column location text not null default ''`.execute(db);
  await sql`alter table probe_schedule drop constraint probe_schedule_pkey`.execute(db);
  await sql`alter table probe_schedule add constraint probe_schedule_pkey
    primary key (probe_key, location)`.execute(db);
  await sql`drop index probe_schedule_due_idx`.execute(db);
  await sql`create index probe_schedule_due_idx on probe_schedule (location, next_due_at)`
    .execute(db);

  await sql`alter table probe_results add column location text not null default ''`.execute(db);

  await sql`alter table probe_rollups add column location text not null default ''`.execute(db);
  await sql`alter table probe_rollups drop constraint probe_rollups_pkey`.execute(db);
  await sql`alter table probe_rollups add constraint probe_rollups_pkey
    primary key (probe_key, location, hour)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from probe_rollups where location <> ''`.execute(db);
  await sql`alter table probe_rollups drop constraint probe_rollups_pkey`.execute(db);
  await sql`alter table probe_rollups add constraint probe_rollups_pkey
    primary key (probe_key, hour)`.execute(db);
  await sql`alter table probe_rollups drop column location`.execute(db);
  await sql`delete from probe_results where location <> ''`.execute(db);
  await sql`alter table probe_results drop column location`.execute(db);
  await sql`delete from probe_schedule where location <> ''`.execute(db);
  await sql`drop index probe_schedule_due_idx`.execute(db);
  await sql`create index probe_schedule_due_idx on probe_schedule (next_due_at)`.execute(db);
  await sql`alter table probe_schedule drop constraint probe_schedule_pkey`.execute(db);
  await sql`alter table probe_schedule add constraint probe_schedule_pkey primary key (probe_key)`
    .execute(db);
  await sql`alter table probe_schedule drop column location`.execute(db);
  await sql`alter table projects drop column default_locations`.execute(db);
  await sql`alter table probes drop column locations`.execute(db);
  await db.schema.dropTable("locations").execute();
}
