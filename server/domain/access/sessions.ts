/**
 * Dashboard sessions: a server-side record per sign-in, found by the SHA-256 digest of the token
 * its cookie holds (the token itself is never stored). A session ends when it has not been used
 * for the idle lifetime, at its absolute end, when it is signed out or ended by an admin, and, for
 * a session signed in with an API key, when that key no longer works (deleted, rotated, expired or
 * taken out of the configuration): the key's digest is looked up again with the session.
 *
 * A session seen in the last second is answered from memory, so a request costs no query; an
 * end in this process is seen at once, one in another process within that second.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { newSecret, sha256Hex } from "../../base/secret_token.ts";
import type { Db } from "../../storage/database.ts";
import { json } from "../../storage/json.ts";
import type { Principal, Role } from "../principal.ts";
import { principalOfKey } from "../api_keys.ts";

/** Session tokens start with this, so a leaked one is recognisable (and told from API keys). */
export const SESSION_TOKEN_PREFIX = "pds_";

/** How long a session lasts unused (`idleMs`) and at most (`absoluteMs`). */
export interface SessionLifetimes {
  idleMs: number;
  absoluteMs: number;
}

/** 12 hours unused, 7 days at most (`SESSION_IDLE_MINUTES`, `SESSION_MAX_HOURS`). */
export const DEFAULT_SESSION_LIFETIMES: SessionLifetimes = {
  idleMs: 12 * 3_600_000,
  absoluteMs: 7 * 24 * 3_600_000,
};

/**
 * The principal of a key by its SHA-256 digest (hex), for sessions signed in with a key: one of
 * the keys from the environment (`configuredPrincipals`), or else a key made through the API and
 * not expired (`server/domain/api_keys.ts`); null for a key that no longer works.
 */
export function keyPrincipals(
  { db, configured, now = Date.now }: {
    db: Db;
    configured: readonly { key: string; principal: Principal }[];
    now?: () => number;
  },
): (keySha256: string) => Promise<Principal | null> {
  const byDigest = new Map(configured.map(({ key, principal }) => [sha256Hex(key), principal]));
  return async (keySha256) => {
    const found = byDigest.get(keySha256);
    if (found) return found;
    const stored = await principalOfKey(db, keySha256);
    if (!stored || (stored.expiresAt !== null && stored.expiresAt <= now())) return null;
    return stored.principal;
  };
}

/** Who a session is for: a key (by its digest) or a single sign-on user. */
export type SessionOwner =
  | { kind: "key"; keySha256: string }
  | { kind: "oidc"; name: string; role: Role; projects: string[] | null };

/** A session as the sessions API shows it: never its token. */
export interface SessionRecord {
  id: string;
  kind: "key" | "oidc";
  name: string;
  role: Role;
  projects: string[] | null;
  created_at: string;
  last_seen_at: string;
  /** When it ends at the latest, used or not. */
  expires_at: string;
  /** When it ends if unused from now: its last use plus the idle lifetime, at most `expires_at`. */
  idle_expires_at: string;
  user_agent: string | null;
}

export interface Sessions {
  readonly lifetimes: SessionLifetimes;
  /** A new session: its token (for the cookie, shown nowhere else) and its record. */
  create(
    owner: SessionOwner,
    details?: { userAgent?: string | null },
  ): Promise<{ token: string; record: SessionRecord; principal: Principal } | null>;
  /** The principal of a session's token, or null when it is none or has ended. */
  check(token: string): Promise<Principal | null>;
  /** Ends the session of a token (sign-out); whether there was one. */
  endToken(token: string): Promise<boolean>;
  /**
   * Ends a session by id; whether there was one. `on` is the transaction to do it in (a
   * procedure's), the sessions' database when absent; so for `list` and `get`.
   */
  end(id: string, on?: Db): Promise<boolean>;
  /** The sessions not yet ended, newest first; those of one name when given. */
  list(filter?: { name?: string }, on?: Db): Promise<SessionRecord[]>;
  /** The record of one session not yet ended, or null. */
  get(id: string, on?: Db): Promise<SessionRecord | null>;
  /** Ends the sessions signed in with a key (by its digest), at once: a key deleted or rotated. */
  endOfKey(keySha256: string): Promise<number>;
}

export { sha256Hex };

/** How long a session's check is kept in memory (ms). */
const CACHE_MS = 1000;
/** The most sessions kept in memory: past it the oldest is dropped. */
const CACHE_ENTRIES = 10_000;

type Row = {
  id: string;
  kind: "key" | "oidc";
  name: string;
  role: Role;
  projects: string[] | null;
  key_sha256: string | null;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  user_agent: string | null;
};

/**
 * The sessions over `db`. `keyPrincipal` names the principal of a key by its digest (null when
 * no key has it now): a key's session takes its role, projects and name from it at each check,
 * and ends when it answers null. `now` is the clock (tests drive it).
 */
export function createSessions(
  { db, lifetimes, keyPrincipal, now = Date.now, cacheMs = CACHE_MS }: {
    db: Db;
    lifetimes: SessionLifetimes;
    keyPrincipal: (keySha256: string) => Promise<Principal | null> | Principal | null;
    now?: () => number;
    cacheMs?: number;
  },
): Sessions {
  const cache = new Map<string, { until: number; value: Promise<Principal | null> }>();
  /** Sessions ended in this process: their checks are dropped from memory at once. */
  const forget = (digest: string) => cache.delete(digest);
  // A use moves the idle clock; written at most once per this, so a busy session is not a write
  // per request (the idle lifetime is kept to within it).
  const touchEveryMs = Math.min(60_000, Math.max(1000, lifetimes.idleMs / 20));

  const columns = [
    "id",
    "kind",
    "name",
    "role",
    "projects",
    "key_sha256",
    "created_at",
    "last_seen_at",
    "expires_at",
    "user_agent",
  ] as const;

  const record = (row: Row): SessionRecord => {
    const idleEnd = Math.min(
      row.last_seen_at.getTime() + lifetimes.idleMs,
      row.expires_at.getTime(),
    );
    return {
      id: row.id,
      kind: row.kind,
      name: row.name,
      role: row.role,
      projects: row.projects,
      created_at: row.created_at.toISOString(),
      last_seen_at: row.last_seen_at.toISOString(),
      expires_at: row.expires_at.toISOString(),
      idle_expires_at: new Date(idleEnd).toISOString(),
      user_agent: row.user_agent,
    };
  };

  const live = (row: Row, at: number) =>
    row.expires_at.getTime() > at && row.last_seen_at.getTime() + lifetimes.idleMs > at;

  /** The principal a session's row stands for now, or null when its key no longer works. */
  const principalOf = async (row: Row): Promise<Principal | null> => {
    if (row.kind === "oidc") {
      return {
        source: "session",
        name: row.name,
        role: row.role,
        projects: row.projects,
        sessionId: row.id,
      };
    }
    const key = row.key_sha256 === null ? null : await keyPrincipal(row.key_sha256);
    if (!key) return null;
    return {
      source: "session",
      name: keySessionName(key.name),
      role: key.role,
      projects: key.projects,
      sessionId: row.id,
    };
  };

  const load = async (digest: string): Promise<Principal | null> => {
    const row = await db.selectFrom("dashboard_sessions").select(columns)
      .where("token_sha256", "=", digest).executeTakeFirst() as Row | undefined;
    if (!row) return null;
    const at = now();
    const principal = live(row, at) ? await principalOf(row) : null;
    if (!principal) {
      await db.deleteFrom("dashboard_sessions").where("id", "=", row.id).execute();
      return null;
    }
    if (at - row.last_seen_at.getTime() >= touchEveryMs) {
      await db.updateTable("dashboard_sessions").set({ last_seen_at: new Date(at) })
        .where("id", "=", row.id).execute();
    }
    return principal;
  };

  /** Drops the sessions past either lifetime (each sign-in sweeps, so the table stays small). */
  const sweep = (at: number) =>
    db.deleteFrom("dashboard_sessions").where((eb) =>
      eb.or([
        eb("expires_at", "<=", new Date(at)),
        eb("last_seen_at", "<=", new Date(at - lifetimes.idleMs)),
      ])
    ).execute();

  return {
    lifetimes,
    async create(owner, details = {}) {
      const at = now();
      await sweep(at);
      let name: string, role: Role, projects: string[] | null;
      if (owner.kind === "key") {
        const key = await keyPrincipal(owner.keySha256);
        if (!key) return null;
        ({ role } = key);
        name = keySessionName(key.name);
        projects = key.projects === null ? null : [...key.projects];
      } else {
        ({ name, role, projects } = owner);
      }
      const { secret: token, digest } = newSecret(SESSION_TOKEN_PREFIX);
      const row = await db.insertInto("dashboard_sessions").values({
        id: randomBytes(12).toString("base64url"),
        token_sha256: digest,
        kind: owner.kind,
        name,
        role,
        projects: projects === null ? null : json(projects),
        key_sha256: owner.kind === "key" ? owner.keySha256 : null,
        created_at: new Date(at),
        last_seen_at: new Date(at),
        expires_at: new Date(at + lifetimes.absoluteMs),
        user_agent: details.userAgent?.slice(0, 256) ?? null,
      }).returning(columns).executeTakeFirstOrThrow() as Row;
      const principal = { source: "session", name, role, projects, sessionId: row.id } as const;
      return { token, record: record(row), principal };
    },
    check(token) {
      if (!token.startsWith(SESSION_TOKEN_PREFIX)) return Promise.resolve(null);
      const digest = sha256Hex(token);
      const at = now();
      const kept = cache.get(digest);
      if (kept && kept.until > at) return kept.value;
      cache.delete(digest);
      if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
      const entry = { until: at + cacheMs, value: load(digest) };
      cache.set(digest, entry);
      entry.value.catch(() => {
        if (cache.get(digest) === entry) cache.delete(digest);
      });
      return entry.value;
    },
    async endToken(token) {
      const digest = sha256Hex(token);
      forget(digest);
      const ended = await db.deleteFrom("dashboard_sessions").where("token_sha256", "=", digest)
        .executeTakeFirst();
      return ended.numDeletedRows > 0n;
    },
    async end(id, on = db) {
      const ended = await on.deleteFrom("dashboard_sessions").where("id", "=", id)
        .returning("token_sha256").executeTakeFirst();
      if (ended) forget(ended.token_sha256);
      return ended !== undefined;
    },
    async list(filter = {}, on = db) {
      const at = now();
      let query = on.selectFrom("dashboard_sessions").select(columns)
        .where("expires_at", ">", new Date(at))
        .where("last_seen_at", ">", new Date(at - lifetimes.idleMs));
      if (filter.name !== undefined) query = query.where("name", "=", filter.name);
      const rows = await query.orderBy("created_at", "desc").orderBy("id").execute() as Row[];
      return rows.map(record);
    },
    async get(id, on = db) {
      const row = await on.selectFrom("dashboard_sessions").select(columns)
        .where("id", "=", id).executeTakeFirst() as Row | undefined;
      return row && live(row, now()) ? record(row) : null;
    },
    async endOfKey(keySha256) {
      const ended = await db.deleteFrom("dashboard_sessions").where("key_sha256", "=", keySha256)
        .returning("token_sha256").execute();
      for (const { token_sha256 } of ended) forget(token_sha256);
      return ended.length;
    },
  };
}

/** The name a key's session goes by: `key NAME` (the audit log tells it from the key's calls). */
export function keySessionName(keyName: string): string {
  return `key ${keyName}`;
}
