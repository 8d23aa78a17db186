// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Flapping: the policy's `flap_changes` (0: off) and `flap_minutes`, a project's override null to
// inherit. Each probe's verdict row keeps the times of its recent state changes (`flap_times`, a
// JSON array, those within `flap_minutes`), since when it is flapping, and when it counts as
// stable if nothing changes before (`flap_settle_at`, which the deliverer's poll looks up).
// Dependencies: a probe names the probes it depends on (same project; a deleted one drops out by
// the cascade). An incident opened while one of them was down keeps that dependency's key in
// `suppressed_by` until it is told, or resolved untold.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table alert_settings
    add column flap_changes integer not null default 0,
    add column flap_minutes integer not null default 30`.execute(db);
  await sql`alter table project_alerts
    add column flap_changes integer, add column flap_minutes integer`.execute(db);
  await sql`alter table probe_verdicts
    add column flap_times json, add column flapping_since timestamptz,
    add column flap_settle_at timestamptz`.execute(db);
  await sql`create index probe_verdicts_flap_settle_idx on probe_verdicts (flap_settle_at)
    where flap_settle_at is not null`.execute(db);
  await sql`alter table incidents add column suppressed_by bigint`.execute(db);
  await sql`create index incidents_suppressed_by_idx on incidents (suppressed_by)
    where suppressed_by is not null and resolved_at is null`.execute(db);
  await db.schema.createTable("probe_dependencies")
    .addColumn(
      "probe_key",
      "bigint",
      (c) => c.notNull().references("probes.key").onDelete("cascade"),
    )
    .addColumn(
      "depends_on",
      "bigint",
      (c) => c.notNull().references("probes.key").onDelete("cascade"),
    )
    .addPrimaryKeyConstraint("probe_dependencies_pkey", ["probe_key", "depends_on"])
    .addCheckConstraint("probe_dependencies_not_self", sql`probe_key <> depends_on`)
    .execute();
  await sql`create index probe_dependencies_depends_on_idx on probe_dependencies (depends_on)`
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("probe_dependencies").execute();
  await sql`alter table incidents drop column suppressed_by`.execute(db);
  await sql`alter table probe_verdicts drop column flap_times, drop column flapping_since,
    drop column flap_settle_at`.execute(db);
  await sql`alter table project_alerts drop column flap_changes, drop column flap_minutes`
    .execute(db);
  await sql`alter table alert_settings drop column flap_changes, drop column flap_minutes`
    .execute(db);
}
