// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// API keys made through the API: the SHA-256 digest of the key (never the key), its role, the
// projects it is limited to (a JSON list; null for every project), who made it and when, when it
// expires (null: never) and when it was last used (written at most once a minute a key).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table api_keys (
    name text primary key,
    key_sha256 text not null unique,
    role text not null check (role in ('viewer', 'editor', 'admin')),
    projects json,
    created_at timestamptz not null default now(),
    created_by text not null,
    updated_at timestamptz not null default now(),
    expires_at timestamptz,
    last_used_at timestamptz
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table api_keys`.execute(db);
}
