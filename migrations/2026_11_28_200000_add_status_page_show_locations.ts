// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Whether a public status page names probes' locations: off for every page, existing ones
// included, since location names are internal words their owners did not choose to publish.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("status_pages")
    .addColumn("show_locations", "boolean", (col) => col.notNull().defaultTo(sql`false`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("status_pages").dropColumn("show_locations").execute();
}
