/**
 * Notification targets: named webhook, Slack, Discord and mail destinations, with the built-in
 * `log` target listed first. What is secret (a webhook's signing key, the whole URL of a Slack or
 * Discord target) is kept in the `secret` column and never read back by anything here but
 * `targetForDelivery`; reads show a masked form.
 *
 * @module
 */
import {
  hasUrlCredentials,
  LOG_TARGET,
  MASKED_WEBHOOK_SECRET,
  type NotificationTarget,
  type TargetCreateInput,
  type TargetPatchInput,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_URL_CREDENTIALS_MESSAGE,
} from "@probe/shared";
import { Buffer } from "node:buffer";
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import { json } from "../db/json.ts";
import type { NotificationTargetsTable } from "../db/schema.ts";
import { DomainError, noFieldsProvided } from "./errors.ts";

export const targetNotFound = () => new DomainError("not_found", "Notification target not found");

/** The built-in `log` target is always there, as it is. */
const builtIn = () =>
  new DomainError("conflict", "The built-in log target cannot be changed or deleted");

/** A stored target as the sender needs it, secrets included: never answered, never logged. */
export type TargetForDelivery =
  | { name: string; kind: "webhook"; url: string; secret: string }
  | { name: string; kind: "slack" | "discord"; url: string }
  | { name: string; kind: "mail"; recipients: string[] };

/** The built-in target, as lists and reads show it. */
export const LOG_TARGET_READ: NotificationTarget = {
  name: LOG_TARGET,
  kind: "log",
  url: null,
  secret: null,
  created_at: null,
  updated_at: null,
};

/** Bytes of a generated signing key: 32, within the 24 to 64 Standard Webhooks allows. */
const GENERATED_SECRET_BYTES = 32;

/** A new Standard Webhooks signing key: `whsec_` and the base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(GENERATED_SECRET_BYTES));
  return `${WEBHOOK_SECRET_PREFIX}${Buffer.from(bytes).toString("base64")}`;
}

/** A Slack or Discord URL as shown: its scheme and host, the rest (the credential) elided. */
export function maskChatUrl(url: string): string {
  const { protocol, host } = new URL(url);
  return `${protocol}//${host}/…`;
}

type Row = {
  name: string;
  kind: NotificationTargetsTable["kind"];
  config: Record<string, unknown> | null;
  created_at: Date | string;
  updated_at: Date | string;
  has_secret: boolean;
};

const readColumns = [
  "name",
  "kind",
  "config",
  "created_at",
  "updated_at",
  sql<boolean>`secret is not null`.as("has_secret"),
] as const;

const stringOf = (value: unknown) => (typeof value === "string" ? value : null);

/** A row as it is read: the `secret` column itself is never selected for this. */
function toRead(row: Row): NotificationTarget {
  const config = row.config ?? {};
  const base = {
    name: row.name,
    kind: row.kind,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
  if (row.kind === "mail") {
    const recipients = Array.isArray(config.recipients)
      ? config.recipients.filter((r): r is string => typeof r === "string")
      : [];
    return { ...base, url: null, recipients, secret: null };
  }
  return {
    ...base,
    // A Slack or Discord target keeps only its masked URL readable (`config.url`).
    url: stringOf(config.url),
    secret: row.kind === "webhook" && row.has_secret ? MASKED_WEBHOOK_SECRET : null,
  };
}

/**
 * Creates a target; a name that is taken is a conflict. A webhook without a secret gets a
 * generated one, answered in full this once; otherwise the answer is the target as it is read.
 */
export async function createTarget(
  { db, input, generateSecret = generateWebhookSecret }: {
    db: Db;
    input: TargetCreateInput;
    generateSecret?: () => string;
  },
): Promise<NotificationTarget> {
  // The schema checked that each kind has what it needs.
  const { kind, url = "", recipients = [] } = input;
  let config: Record<string, unknown>;
  let secret: string | null = null;
  let generated: string | null = null;
  switch (kind) {
    case "webhook":
      config = { url };
      secret = input.secret ?? (generated = generateSecret());
      break;
    case "slack":
    case "discord":
      config = { url: maskChatUrl(url) };
      secret = url;
      break;
    case "mail":
      config = { recipients };
      break;
  }
  const row = await db
    .insertInto("notification_targets")
    .values({ name: input.name, kind, config: json(config), secret })
    .onConflict((oc) => oc.column("name").doNothing())
    .returning(readColumns)
    .executeTakeFirst();
  if (!row) throw new DomainError("conflict", "Notification target already exists");
  const read = toRead(row);
  return generated === null ? read : { ...read, secret: generated };
}

/** Every target: the built-in `log` first, then the stored ones by name (bytewise). */
export async function listTargets({ db }: { db: Db }): Promise<NotificationTarget[]> {
  const rows = await db.selectFrom("notification_targets").select(readColumns)
    .orderBy(sql`name collate "C"`).execute();
  return [LOG_TARGET_READ, ...rows.map(toRead)];
}

/** One target by name; `log` is the built-in one. */
export async function getTarget(
  { db, name }: { db: Db; name: string },
): Promise<NotificationTarget> {
  if (name === LOG_TARGET) return LOG_TARGET_READ;
  const row = await db.selectFrom("notification_targets").select(readColumns)
    .where("name", "=", name).executeTakeFirst();
  if (!row) throw targetNotFound();
  return toRead(row);
}

const notForKind = (path: string, kind: string) => ({
  path,
  message: `is not a field of a ${kind} target`,
});

/**
 * Changes what a target's kind has: the URL (webhook, Slack, Discord), the signing key
 * (webhook), the recipients (mail). A field its kind does not have is a 422 naming it; the
 * built-in `log` target cannot be changed (409).
 */
export function updateTarget(
  { db, input }: { db: Db; input: TargetPatchInput },
): Promise<NotificationTarget> {
  const { name, kind: _kind, ...fields } = input;
  if (Object.keys(fields).length === 0) throw noFieldsProvided();
  if (name === LOG_TARGET) {
    throw builtIn();
  }
  return db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom("notification_targets").select(["kind", "config"])
      .where("name", "=", name).forUpdate().executeTakeFirst();
    if (!current) throw targetNotFound();
    const { kind } = current;
    const details = [];
    if (fields.secret !== undefined && kind !== "webhook") {
      details.push(notForKind("secret", kind));
    }
    if (fields.url !== undefined && kind === "mail") details.push(notForKind("url", kind));
    if (fields.recipients !== undefined && kind !== "mail") {
      details.push(notForKind("recipients", kind));
    }
    if (fields.url !== undefined && kind === "webhook" && hasUrlCredentials(fields.url)) {
      details.push({ path: "url", message: WEBHOOK_URL_CREDENTIALS_MESSAGE });
    }
    if (details.length > 0) {
      throw new DomainError("validation_failed", "Validation failed", details);
    }

    const config = { ...(current.config ?? {}) };
    let secret: string | undefined;
    if (fields.url !== undefined) {
      if (kind === "webhook") config.url = fields.url;
      else {
        config.url = maskChatUrl(fields.url);
        secret = fields.url;
      }
    }
    if (fields.recipients !== undefined) config.recipients = fields.recipients;
    if (fields.secret !== undefined) secret = fields.secret;
    const row = await trx.updateTable("notification_targets")
      .set({
        config: json(config),
        ...(secret !== undefined && { secret }),
        updated_at: sql`now()`,
      })
      .where("name", "=", name)
      .returning(readColumns)
      .executeTakeFirstOrThrow();
    return toRead(row);
  });
}

/**
 * Deletes a target, unless the alert policy or a project's alert overrides name it (409, the
 * details saying which). The target row is locked first: a policy change naming the target
 * (which holds the row `for share` while it checks the names) either commits before and is
 * seen here, or waits and then finds the target gone.
 */
export function deleteTarget({ db, name }: { db: Db; name: string }): Promise<void> {
  if (name === LOG_TARGET) {
    return Promise.reject(builtIn());
  }
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("notification_targets").select("name")
      .where("name", "=", name).forUpdate().executeTakeFirst();
    if (!row) throw targetNotFound();
    const names = (column: string) =>
      sql<boolean>`exists (select 1 from json_array_elements_text(${sql.ref(column)}) as t(n)
                           where t.n = ${name})`;
    const policy = await trx.selectFrom("alert_settings").select("id")
      .where(names("targets")).executeTakeFirst();
    const projects = await trx.selectFrom("project_alerts").select("project")
      .where("targets", "is not", null).where(names("targets"))
      .orderBy(sql`project collate "C"`).limit(20).execute();
    if (policy || projects.length > 0) {
      throw new DomainError("conflict", "Notification target is in use", [
        ...(policy ? [{ path: "name", message: "named by the alert policy's targets" }] : []),
        ...projects.map((p) => ({
          path: "name",
          message: `named by the alert targets of project "${p.project}"`,
        })),
      ]);
    }
    await trx.deleteFrom("notification_targets").where("name", "=", name).execute();
  });
}

/** A stored target with its secrets, for sending; null when there is none by that name. */
export async function targetForDelivery(
  { db, name }: { db: Db; name: string },
): Promise<TargetForDelivery | null> {
  const row = await db.selectFrom("notification_targets").select([
    "name",
    "kind",
    "config",
    "secret",
  ])
    .where("name", "=", name).executeTakeFirst();
  if (!row) return null;
  const config = row.config ?? {};
  switch (row.kind) {
    case "webhook": {
      const url = stringOf(config.url);
      return url && row.secret ? { name, kind: "webhook", url, secret: row.secret } : null;
    }
    case "slack":
    case "discord":
      return row.secret ? { name, kind: row.kind, url: row.secret } : null;
    case "mail": {
      const recipients = Array.isArray(config.recipients)
        ? config.recipients.filter((r): r is string => typeof r === "string")
        : [];
      return { name, kind: "mail", recipients };
    }
  }
  return null;
}
