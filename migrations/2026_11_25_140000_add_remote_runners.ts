// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// The runner protocol (issue 21):
// - location_claims: one row per claim a remote location's runner made. A run's id names its
//   claim, and the claim names the location it was made for, so that a result posted for a run
//   another location's token claimed (or no claim made) is refused. Kept a day.
// - location_runners: the runners seen per location ('' for the built-in one), for the
//   locations' read (runners seen in the last minute, last seen, version).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("location_claims")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn(
      "location",
      "text",
      (c) => c.notNull().references("locations.name").onDelete("cascade"),
    )
    .addColumn("runner", "text", (c) => c.notNull())
    .addColumn("issued_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index location_claims_issued_idx on location_claims (issued_at)`.execute(db);
  await sql`create index location_claims_location_idx on location_claims (location)`.execute(db);

  await db.schema
    .createTable("location_runners")
    .addColumn("location", "text", (c) => c.notNull())
    .addColumn("runner", "text", (c) => c.notNull())
    .addColumn("version", "text", (c) => c.notNull())
    .addColumn("first_seen_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("last_seen_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("location_runners_pkey", ["location", "runner"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("location_runners").execute();
  await db.schema.dropTable("location_claims").execute();
}
