// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Public status pages and badges (issue 12): each project's status page settings (private until
// its owner makes it public), and badge tokens, of a probe or of a whole project, stored only as
// their SHA-256 digests.

export async function up(db: Kysely<any>): Promise<void> {
  // No row: the defaults (not public, no title or description of its own, URLs hidden).
  await db.schema
    .createTable("status_pages")
    .addColumn(
      "project",
      "text",
      (c) => c.primaryKey().references("projects.name").onDelete("cascade"),
    )
    .addColumn("public", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("title", "text")
    .addColumn("description", "text")
    .addColumn("show_urls", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // A token of a probe (probe_key set) or of its whole project (probe_key null). Only the
  // digest of the token is kept: rotating writes a new digest, and the old token finds nothing.
  // The project's foreign key comes first, so that inserts lock the project row before the probe
  // row, the order a project delete takes them in.
  await db.schema
    .createTable("badge_tokens")
    .addColumn("id", "bigint", (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn(
      "project",
      "text",
      (c) => c.notNull().references("projects.name").onDelete("cascade"),
    )
    .addColumn("probe_key", "bigint", (c) => c.references("probes.key").onDelete("cascade"))
    .addColumn("token_sha256", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("rotated_at", "timestamptz")
    .addUniqueConstraint("badge_tokens_token_sha256_key", ["token_sha256"])
    .execute();
  await sql`create index badge_tokens_project_idx on badge_tokens (project, id)`.execute(db);
  // Deleting a probe finds its tokens by this index.
  await sql`create index badge_tokens_probe_idx on badge_tokens (probe_key)
            where probe_key is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("badge_tokens").execute();
  await db.schema.dropTable("status_pages").execute();
}
