// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import type { Kysely } from "kysely";

// Frozen: a change to the schema is a new migration.
// Badge tokens are kept as they are (beside their digest, which lookups still use), so a badge's
// snippet can be copied again: a token reveals only what its badge shows. Tokens made before
// were stored as digests only: theirs stays null until the badge is rotated.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("badge_tokens").addColumn("token", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("badge_tokens").dropColumn("token").execute();
}
