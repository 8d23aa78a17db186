// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("projects")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("label", "text")
    .addColumn("description", "text")
    .addColumn("status", "text", (c) => c.notNull().defaultTo("enabled"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint("projects_status_check", sql`status in ('enabled', 'disabled')`)
    .execute();

  // `key` is the probe's internal identity: it survives rewrites that change probe_id.
  await db.schema
    .createTable("probes")
    .addColumn("key", "bigint", (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn(
      "project",
      "text",
      (c) => c.notNull().references("projects.name").onDelete("restrict"),
    )
    .addColumn("probe_id", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("method", "text", (c) => c.notNull())
    // json, not jsonb: headers and body come back exactly as they were sent.
    .addColumn("headers", "json", (c) => c.notNull())
    .addColumn("body", "json")
    .addColumn("latency", "integer")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("probes_project_url_key", ["project", "url"])
    .addUniqueConstraint("probes_project_probe_id_key", ["project", "probe_id"])
    .execute();

  await db.schema
    .createTable("archived_projects")
    .addColumn("id", "bigint", (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("project", "text", (c) => c.notNull())
    .addColumn("snapshot", "json", (c) => c.notNull())
    .addColumn("archived_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("archived_projects_project_idx").on("archived_projects")
    .column("project").execute();

  await db.schema
    .createTable("iam_alive_settings")
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn("enabled", "boolean", (c) => c.notNull())
    .addColumn(
      "interval_hours",
      "integer",
      (c) => c.notNull().check(sql`interval_hours between 1 and 24`),
    )
    .addColumn("channels", "json", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`insert into iam_alive_settings (id, enabled, interval_hours, channels)
            values (1, false, 24, '["log"]')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("iam_alive_settings").execute();
  await db.schema.dropTable("archived_projects").execute();
  await db.schema.dropTable("probes").execute();
  await db.schema.dropTable("projects").execute();
}
