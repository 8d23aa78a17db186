/**
 * API keys made through the API (docs/access.md): each with a role, the projects it is limited
 * to (or every project), who made it, when it expires and when it was last used. A key is
 * answered once, when it is made or rotated; only its SHA-256 digest is stored (the key is 32
 * random bytes: a plain digest is as good as a slow one, and costs microseconds at the edge).
 * The keys from the environment are listed beside them (`configured: true`) and cannot be
 * changed here.
 *
 * @module
 */
import type { ApiKey, ApiKeyCreateInput, ApiKeyPatchInput, ApiKeyWithKey } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { afterCommit } from "../storage/joined.ts";
import { json } from "../storage/json.ts";
import type { Principal } from "./principal.ts";
import { newSecret, sha256Hex } from "../base/secret_token.ts";
import { DomainError, isUniqueViolation, noFieldsProvided } from "./errors.ts";

/** What a stored key starts with: the edge looks up only keys that do. */
export const STORED_KEY_PREFIX = "psk_";

export const keyDigest = sha256Hex;

function newKey(): { key: string; digest: string } {
  const { secret, digest } = newSecret(STORED_KEY_PREFIX);
  return { key: secret, digest };
}

/**
 * Moves on with every key changed, rotated or deleted in this process: the edge's cache of what
 * a key is (`createStoredKeyCheck`) is kept under it, so a change holds at once here (and within
 * the cache's second in the other processes). One count for the process, not one per database
 * handle; moved once the change is committed (`afterCommit`), so a read in between does not
 * keep the old key under the new count.
 */
let version = 0;
export const apiKeysVersion = () => version;
const keysChanged = () => void version++;

const columns = [
  "name",
  "role",
  "projects",
  "created_at",
  "created_by",
  "expires_at",
  "last_used_at",
] as const;

type Row = {
  name: string;
  role: ApiKey["role"];
  projects: string[] | null;
  created_at: Date;
  created_by: string;
  expires_at: Date | null;
  last_used_at: Date | null;
};

const iso = (d: Date | null) => d && new Date(d).toISOString();

function recordOf(row: Row): ApiKey {
  return {
    name: row.name,
    role: row.role,
    projects: row.projects,
    configured: false,
    created_at: iso(row.created_at),
    created_by: row.created_by,
    expires_at: iso(row.expires_at),
    last_used_at: iso(row.last_used_at),
  };
}

/** A key from the environment as the list shows it. */
function configuredRecord(principal: Principal): ApiKey {
  return {
    name: principal.name,
    role: principal.role,
    projects: principal.projects && [...principal.projects],
    configured: true,
    created_at: null,
    created_by: null,
    expires_at: null,
    last_used_at: null,
  };
}

const notFound = () => new DomainError("not_found", "API key not found");
const configuredKey = (name: string) =>
  new DomainError(
    "conflict",
    `"${name}" is a key from the environment: it is changed by changing the environment`,
  );

/** The stored key whose digest this is (`keyDigest`), with what it may do and until when. */
export async function principalOfKey(
  db: Db,
  digest: string,
): Promise<{ principal: Principal; expiresAt: number | null } | null> {
  const row = await db.selectFrom("api_keys").select(["name", "role", "projects", "expires_at"])
    .where("key_sha256", "=", digest).executeTakeFirst();
  if (!row) return null;
  return {
    principal: { source: "stored_key", name: row.name, role: row.role, projects: row.projects },
    expiresAt: row.expires_at && new Date(row.expires_at).getTime(),
  };
}

/** Records that the keys with these digests were used at these times (one statement). */
export async function recordKeysUsed(db: Db, used: ReadonlyMap<string, Date>): Promise<void> {
  if (used.size === 0) return;
  const values = sql.join(
    [...used].map(([digest, at]) => sql`(${digest}, cast(${at.toISOString()} as timestamptz))`),
  );
  await sql`update api_keys set last_used_at = v.at from (values ${values}) as v(digest, at)
            where api_keys.key_sha256 = v.digest
              and (api_keys.last_used_at is null or api_keys.last_used_at < v.at)`.execute(db);
}

/** The keys from the environment first (as they are configured), then the stored ones by name. */
export async function listApiKeys(
  { db, configured = [] }: { db: Db; configured?: readonly Principal[] },
): Promise<ApiKey[]> {
  const rows = await db.selectFrom("api_keys").select(columns).orderBy(sql`name collate "C"`)
    .execute();
  return [...configured.map(configuredRecord), ...rows.map(recordOf)];
}

export async function getApiKey(
  { db, name, configured = [] }: { db: Db; name: string; configured?: readonly Principal[] },
): Promise<ApiKey> {
  const fromEnv = configured.find((p) => p.name === name);
  if (fromEnv) return configuredRecord(fromEnv);
  const row = await db.selectFrom("api_keys").select(columns).where("name", "=", name)
    .executeTakeFirst();
  if (!row) throw notFound();
  return recordOf(row);
}

/** A 422 for each project named that does not exist, and for an expiry not in the future. */
async function checkFields(
  db: Db,
  fields: { projects?: readonly string[] | null; expires_at?: string | null },
  now: Date,
): Promise<void> {
  if (fields.expires_at && new Date(fields.expires_at).getTime() <= now.getTime()) {
    throw new DomainError("validation_failed", "Validation failed", [
      { path: "expires_at", message: "must be in the future" },
    ]);
  }
  if (!fields.projects) return;
  const found = new Set(
    (await db.selectFrom("projects").select("name").where("name", "in", fields.projects).execute())
      .map((r) => r.name),
  );
  const details = fields.projects.flatMap((name, i) =>
    found.has(name) ? [] : [{ path: `projects.${i}`, message: `no such project: ${name}` }]
  );
  if (details.length) throw new DomainError("validation_failed", "Validation failed", details);
}

/** Makes a key; the key is in this answer only. */
export async function createApiKey(
  { db, input, createdBy, configured = [], now = new Date() }: {
    db: Db;
    input: ApiKeyCreateInput;
    createdBy: string;
    configured?: readonly Principal[];
    now?: Date;
  },
): Promise<ApiKeyWithKey> {
  if (configured.some((p) => p.name === input.name)) throw configuredKey(input.name);
  await checkFields(db, input, now);
  const { key, digest } = newKey();
  const exists = new DomainError("conflict", "API key already exists");
  try {
    const row = await db.insertInto("api_keys").values({
      name: input.name,
      key_sha256: digest,
      role: input.role,
      projects: input.projects ? json(input.projects) : null,
      created_by: createdBy,
      expires_at: input.expires_at ?? null,
    }).onConflict((oc) => oc.column("name").doNothing()).returning(columns).executeTakeFirst();
    if (!row) throw exists;
    return { ...recordOf(row), key };
  } catch (error) {
    if (isUniqueViolation(error)) throw exists;
    throw error;
  }
}

/** Changes a key's role, projects or expiry: its calls get them within the edge's second. */
export async function updateApiKey(
  { db, input, configured = [], now = new Date() }: {
    db: Db;
    input: ApiKeyPatchInput;
    configured?: readonly Principal[];
    now?: Date;
  },
): Promise<ApiKey> {
  const { name, ...fields } = input;
  if (configured.some((p) => p.name === name)) throw configuredKey(name);
  if (Object.keys(fields).length === 0) throw noFieldsProvided();
  await checkFields(db, fields, now);
  const row = await db.updateTable("api_keys").set({
    ...(fields.role !== undefined && { role: fields.role }),
    ...(fields.projects !== undefined &&
      { projects: fields.projects === null ? null : json(fields.projects) }),
    ...(fields.expires_at !== undefined && { expires_at: fields.expires_at }),
    updated_at: sql`now()`,
  }).where("name", "=", name).returning(columns).executeTakeFirst();
  if (!row) throw notFound();
  afterCommit(db, keysChanged);
  return recordOf(row);
}

/** Replaces a key: the old one stops (at once here, within a second elsewhere). */
export async function rotateApiKey(
  { db, name, configured = [] }: { db: Db; name: string; configured?: readonly Principal[] },
): Promise<ApiKeyWithKey> {
  if (configured.some((p) => p.name === name)) throw configuredKey(name);
  const { key, digest } = newKey();
  const row = await db.updateTable("api_keys")
    .set({ key_sha256: digest, updated_at: sql`now()` })
    .where("name", "=", name).returning(columns).executeTakeFirst();
  if (!row) throw notFound();
  afterCommit(db, keysChanged);
  return { ...recordOf(row), key };
}

/** Deletes a key: it stops (at once here, within a second elsewhere). */
export async function deleteApiKey(
  { db, name, configured = [] }: { db: Db; name: string; configured?: readonly Principal[] },
): Promise<void> {
  if (configured.some((p) => p.name === name)) throw configuredKey(name);
  const row = await db.deleteFrom("api_keys").where("name", "=", name).returning("name")
    .executeTakeFirst();
  if (!row) throw notFound();
  afterCommit(db, keysChanged);
}
