// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// The size of a probe's big columns as stored (characters of its URL, headers, body and
// assertions, their JSON text as written), kept by the database on every write: a list reads it
// to know what a page of probes weighs before it reads them (char_length of the json text would
// read each value).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("probes").addColumn(
    "stored_chars",
    "integer",
    (c) =>
      c.notNull().generatedAlwaysAs(
        sql`char_length(url) + char_length(headers::text)
          + coalesce(char_length(body::text), 0) + coalesce(char_length(expect::text), 0)`,
      ).stored(),
  ).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("probes").dropColumn("stored_chars").execute();
}
