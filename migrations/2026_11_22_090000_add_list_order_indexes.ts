// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Lists are ordered bytewise (collate "C") and paged by their sort key; these indexes let each
// page start where the last one ended instead of sorting the table again.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index projects_list_idx on projects ((name collate "C"))`.execute(db);
  await sql`create index probes_list_idx on probes ((project collate "C"), (url collate "C"))`
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("probes_list_idx").execute();
  await db.schema.dropIndex("projects_list_idx").execute();
}
