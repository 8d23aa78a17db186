// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// The size of a probe's big columns as stored (UTF-8 bytes of its URL, headers, body and
// assertions), kept by the database on every write: a list reads it to know how much a page of
// probes weighs before it reads them (octet_length of the json text would read each value).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("probes").addColumn(
    "stored_bytes",
    "integer",
    (c) =>
      c.notNull().generatedAlwaysAs(
        sql`octet_length(url) + octet_length(headers::text)
          + coalesce(octet_length(body::text), 0) + coalesce(octet_length(expect::text), 0)`,
      ).stored(),
  ).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("probes").dropColumn("stored_bytes").execute();
}
