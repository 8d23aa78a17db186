/**
 * A stored notification target as the sender reads it: its settings with its secrets, for
 * sending only.
 *
 * @module
 */
import type { Db } from "../../storage/database.ts";
import { providerOf } from "./providers/mod.ts";

/**
 * A stored target as the sender needs it, its settings (secrets included) beside its name and
 * kind: never answered, never logged.
 */
export type TargetForDelivery = { name: string; kind: string } & Record<string, unknown>;

/** The secrets a row holds (a JSON object); none when it holds nothing readable. */
export function secretsOf(text: string | null): Record<string, unknown> {
  if (text === null) return {};
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/**
 * A stored target with its settings, secrets included, for sending (a setting not stored takes
 * its default); null when there is none by that name, or its kind has no provider.
 */
export async function targetForDelivery(
  { db, name }: { db: Db; name: string },
): Promise<TargetForDelivery | null> {
  const row = await db.selectFrom("notification_targets")
    .select(["name", "kind", "config", "secret"])
    .where("name", "=", name).executeTakeFirst();
  const provider = row && providerOf(row.kind);
  if (!row || !provider) return null;
  const config = row.config ?? {};
  const secrets = secretsOf(row.secret);
  const target: TargetForDelivery = { name, kind: row.kind };
  for (const [field, { secret, default: fallback }] of Object.entries(provider.fields)) {
    const value = (secret ? secrets[field] : config[field]) ?? fallback;
    if (value !== undefined) target[field] = value;
  }
  return target;
}
