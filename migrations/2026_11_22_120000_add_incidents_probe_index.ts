// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// A probe's incidents, newest first (`GET /incidents?project=&probe_id=`), by the probe's internal
// key: its history follows it when a PATCH gives it a new probe_id.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index incidents_probe_idx on incidents (probe_key, id desc)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("incidents_probe_idx").execute();
}
