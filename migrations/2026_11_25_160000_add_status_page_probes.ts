// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Which probes a status page shows (issue 22): their probe ids, in the order chosen; null (every
// existing page) shows every probe of the project.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("status_pages").addColumn("probe_ids", sql`text[]`).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("status_pages").dropColumn("probe_ids").execute();
}
