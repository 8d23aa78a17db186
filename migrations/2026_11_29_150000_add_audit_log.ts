// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// The audit log: one row per change, written in the change's own transaction. Who (the
// principal's name and how it proved it), from where (address, user agent, request id), what
// (the operation, the resource's type and id) and the change (the resource's fields before and
// after, as a viewer would see them: secrets masked). Read newest first (by id), filtered by
// actor or resource; pruned by time (`at`).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table audit_log (
    id bigint generated always as identity primary key,
    at timestamptz not null default now(),
    actor text not null,
    actor_source text not null,
    address text,
    user_agent text,
    request_id text,
    operation text not null,
    resource_type text not null,
    resource_id text not null,
    before json,
    after json
  )`.execute(db);
  await sql`create index audit_log_at_idx on audit_log (at)`.execute(db);
  await sql`create index audit_log_actor_idx on audit_log (actor, id)`.execute(db);
  await sql`create index audit_log_resource_idx on audit_log (resource_type, resource_id, id)`
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table audit_log`.execute(db);
}
