// deno-lint-ignore-file no-explicit-any -- migrations work on Kysely<any>, frozen apart from the app types
import { type Kysely, sql } from "kysely";

// Frozen: a change to the schema is a new migration.
// A target's kind is whatever provider the service has (server/notify/providers), no longer a
// fixed list here. Its secret settings are one JSON object in `secret` (a kind may have several),
// and each secret's mask sits in `config` beside the readable settings: a webhook's key is
// `{"secret": "whsec_…"}` with `config.secret` "whsec_…"; a Slack or Discord URL `{"url": …}`,
// its mask already in `config.url`.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table notification_targets drop constraint notification_targets_kind_check`
    .execute(db);
  await sql`
    update notification_targets
    set secret = json_build_object('secret', secret)::text,
        config = (config::jsonb || '{"secret":"whsec_…"}'::jsonb)::json
    where kind = 'webhook' and secret is not null`.execute(db);
  await sql`
    update notification_targets set secret = json_build_object('url', secret)::text
    where kind in ('slack', 'discord') and secret is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Kinds the old list does not have cannot be kept.
  await sql`delete from notification_targets
            where kind not in ('webhook', 'slack', 'discord', 'mail')`.execute(db);
  await sql`
    update notification_targets
    set secret = secret::json ->> 'secret', config = (config::jsonb - 'secret')::json
    where kind = 'webhook' and secret is not null`.execute(db);
  await sql`
    update notification_targets set secret = secret::json ->> 'url'
    where kind in ('slack', 'discord') and secret is not null`.execute(db);
  await sql`
    alter table notification_targets add constraint notification_targets_kind_check
    check (kind in ('webhook', 'slack', 'discord', 'mail'))`.execute(db);
}
