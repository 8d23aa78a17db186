/**
 * Notification targets: named destinations of the kinds the providers define
 * (`server/alerting/notify/providers/`), with the built-in `log` target listed first. A target's settings
 * are stored by what its provider declares: readable ones in `config`; secrets (a webhook's
 * signing key, the whole URL of a Slack or Discord target) as a JSON object in the `secret`
 * column, never read back by anything here but `targetForDelivery`, their masks in `config`.
 *
 * @module
 */
import { LOG_TARGET } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import type { Provider } from "../alerting/notify/provider.ts";
import { providerOf } from "../alerting/notify/providers/mod.ts";
import {
  fieldProblems,
  type NotificationTargetRead,
  settingsGiven,
  type TargetCreateInput,
  type TargetPatchInput,
} from "../alerting/notify/providers/schema.ts";
import { secretsOf } from "../alerting/notify/stored_target.ts";
import { DomainError, noFieldsProvided } from "./errors.ts";

export { maskCredentialUrl as maskChatUrl } from "../alerting/notify/providers/fields.ts";
export { generateWebhookSecret } from "../alerting/notify/providers/webhook.ts";

export const targetNotFound = () => new DomainError("not_found", "Notification target not found");

/** The built-in `log` target is always there, as it is. */
const builtIn = () =>
  new DomainError("conflict", "The built-in log target cannot be changed or deleted");

/** The built-in target, as lists and reads show it. */
export const LOG_TARGET_READ: NotificationTargetRead = {
  name: LOG_TARGET,
  kind: "log",
  url: null,
  secret: null,
  created_at: null,
  updated_at: null,
};

type Row = {
  name: string;
  kind: string;
  config: Record<string, unknown> | null;
  created_at: Date | string;
  updated_at: Date | string;
};

const readColumns = ["name", "kind", "config", "created_at", "updated_at"] as const;

/** A row as it is read: the `secret` column itself is never selected for this. */
function toRead(row: Row): NotificationTargetRead {
  const config = row.config ?? {};
  const fields = providerOf(row.kind)?.fields ?? {};
  const read: NotificationTargetRead = {
    name: row.name,
    kind: row.kind,
    url: typeof config.url === "string" ? config.url : null,
    secret: null,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
  for (const name of Object.keys(fields)) {
    if (name !== "url" && config[name] !== undefined) read[name] = config[name];
  }
  return read;
}

/**
 * What to store of settings given: readable values and secrets' masks in `config`, secrets in
 * `secrets`, over what is stored already.
 */
function store(
  provider: Provider,
  given: Record<string, unknown>,
  stored: { config: Record<string, unknown>; secrets: Record<string, unknown> },
) {
  const config = { ...stored.config };
  const secrets = { ...stored.secrets };
  for (const [name, value] of Object.entries(given)) {
    const secret = provider.fields[name]?.secret;
    if (secret) {
      secrets[name] = value;
      config[name] = secret.mask(String(value));
    } else config[name] = value;
  }
  const secretText = Object.keys(secrets).length > 0 ? JSON.stringify(secrets) : null;
  return { config, secret: secretText };
}

const invalid = (details: { path: string; message: string }[]) =>
  new DomainError("validation_failed", "Validation failed", details);

/**
 * Creates a target; a name that is taken is a conflict. A field its provider generates (a
 * webhook's signing key) and that was not given is made and answered in full this once;
 * otherwise the answer is the target as it is read.
 */
export async function createTarget(
  { db, input }: { db: Db; input: TargetCreateInput },
): Promise<NotificationTargetRead> {
  const provider = providerOf(input.kind);
  if (!provider) throw invalid([{ path: "kind", message: "is not a kind of target" }]);
  // The schema checked that the kind has what it needs.
  const given = settingsGiven(input);
  const generated: Record<string, string> = {};
  for (const [name, field] of Object.entries(provider.fields)) {
    if (given[name] === undefined && field.generate) {
      given[name] = generated[name] = field.generate();
    }
  }
  const { config, secret } = store(provider, given, { config: {}, secrets: {} });
  const row = await db
    .insertInto("notification_targets")
    .values({ name: input.name, kind: provider.kind, config: json(config), secret })
    .onConflict((oc) => oc.column("name").doNothing())
    .returning(readColumns)
    .executeTakeFirst();
  if (!row) throw new DomainError("conflict", "Notification target already exists");
  return { ...toRead(row), ...generated };
}

/** Every target: the built-in `log` first, then the stored ones by name (bytewise). */
export async function listTargets({ db }: { db: Db }): Promise<NotificationTargetRead[]> {
  const rows = await db.selectFrom("notification_targets").select(readColumns)
    .orderBy(sql`name collate "C"`).execute();
  return [LOG_TARGET_READ, ...rows.map(toRead)];
}

/** One target by name; `log` is the built-in one. */
export async function getTarget(
  { db, name }: { db: Db; name: string },
): Promise<NotificationTargetRead> {
  if (name === LOG_TARGET) return LOG_TARGET_READ;
  const row = await db.selectFrom("notification_targets").select(readColumns)
    .where("name", "=", name).executeTakeFirst();
  if (!row) throw targetNotFound();
  return toRead(row);
}

/**
 * Changes what a target's kind has. A field its kind does not have, or a value its kind refuses,
 * is a 422 naming it; the built-in `log` target cannot be changed (409).
 */
export function updateTarget(
  { db, input }: { db: Db; input: TargetPatchInput },
): Promise<NotificationTargetRead> {
  const { name } = input;
  const given = settingsGiven(input);
  if (Object.keys(given).length === 0) throw noFieldsProvided();
  if (name === LOG_TARGET) {
    throw builtIn();
  }
  return db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom("notification_targets")
      .select(["kind", "config", "secret"])
      .where("name", "=", name).forUpdate().executeTakeFirst();
    if (!current) throw targetNotFound();
    const provider = providerOf(current.kind);
    if (!provider) throw invalid([{ path: "kind", message: "is not a kind of target" }]);
    const problems = fieldProblems(provider, given, false);
    if (problems.length > 0) throw invalid(problems);
    const { config, secret } = store(provider, given, {
      config: current.config ?? {},
      secrets: secretsOf(current.secret),
    });
    const row = await trx.updateTable("notification_targets")
      .set({ config: json(config), secret, updated_at: sql`now()` })
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
    // Named by an escalation step: by the `targets` of any of the steps.
    const escalating = sql<boolean>`exists (
      select 1 from json_array_elements(escalation) as s(step),
        json_array_elements_text(s.step -> 'targets') as t(n)
      where t.n = ${name})`;
    const policy = await trx.selectFrom("alert_settings")
      .select([names("targets").as("targets"), escalating.as("escalation")])
      .where("id", "=", 1).executeTakeFirst();
    const projects = await trx.selectFrom("project_alerts")
      .select([
        "project",
        sql<boolean>`targets is not null and ${names("targets")}`.as("targets"),
        sql<boolean>`escalation is not null and ${escalating}`.as("escalation"),
      ])
      .where((eb) =>
        eb.or([
          eb.and([eb("targets", "is not", null), names("targets")]),
          eb.and([eb("escalation", "is not", null), escalating]),
        ])
      )
      .orderBy(sql`project collate "C"`).limit(20).execute();
    const details = [
      ...(policy?.targets
        ? [{ path: "name", message: "named by the alert policy's targets" }]
        : []),
      ...(policy?.escalation
        ? [{ path: "name", message: "named by the alert policy's escalation" }]
        : []),
      ...projects.flatMap((p) => [
        ...(p.targets
          ? [{ path: "name", message: `named by the alert targets of project "${p.project}"` }]
          : []),
        ...(p.escalation
          ? [{ path: "name", message: `named by the alert escalation of project "${p.project}"` }]
          : []),
      ]),
    ];
    if (details.length > 0) {
      throw new DomainError("conflict", "Notification target is in use", details);
    }
    await trx.deleteFrom("notification_targets").where("name", "=", name).execute();
  });
}
