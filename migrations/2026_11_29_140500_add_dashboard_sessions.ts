// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// Dashboard sessions: the SHA-256 digest of the cookie's token (never the token), who signed in
// (a key, by its digest, or a single sign-on user, with the role and projects their claims gave)
// and the two lifetimes' clocks: the last use (idle) and the absolute end.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table dashboard_sessions (
    id text primary key,
    token_sha256 text not null unique,
    kind text not null check (kind in ('key', 'oidc')),
    name text not null,
    role text not null check (role in ('viewer', 'editor', 'admin')),
    projects json,
    key_sha256 text,
    created_at timestamptz not null default now(),
    last_seen_at timestamptz not null default now(),
    expires_at timestamptz not null,
    user_agent text
  )`.execute(db);
  await sql`create index dashboard_sessions_name_idx on dashboard_sessions (name)`.execute(db);
  await sql`create index dashboard_sessions_key_idx on dashboard_sessions (key_sha256)
            where key_sha256 is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table dashboard_sessions`.execute(db);
}
