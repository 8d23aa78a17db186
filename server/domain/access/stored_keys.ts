/**
 * The edge's check of keys made through the API (`server/domain/api_keys.ts`): a key that
 * starts with `psk_` is looked up by its digest, and what it is kept for a second (by the digest,
 * never the key), so that a key in use costs no database query per request, and a deleted,
 * rotated or changed key stops within that second on every instance (at once in this one, whose
 * changes move the cache's version). An expiry holds to the millisecond. When it was last used
 * is written at most once a minute a key, on the request that finds it due.
 *
 * @module
 */
import type { Db } from "../../storage/database.ts";
import {
  apiKeysVersion,
  keyDigest,
  principalOfKey,
  recordKeysUsed,
  STORED_KEY_PREFIX,
} from "../api_keys.ts";
import { TtlCache } from "../../base/ttl_cache.ts";
import type { Principal } from "../principal.ts";

/** How long what a stored key is may be kept: a deleted key stops within this everywhere. */
export const STORED_KEY_TTL_MS = 1000;

/** How often a key's `last_used_at` is written at most. */
export const LAST_USED_EVERY_MS = 60_000;

export function createStoredKeyCheck(
  { db, ttlMs = STORED_KEY_TTL_MS, now = Date.now }: {
    db: Db;
    /** 0 looks every request up. */
    ttlMs?: number;
    now?: () => number;
  },
): (presented: string) => Promise<Principal | null> {
  const cache = new TtlCache<Awaited<ReturnType<typeof principalOfKey>>>({
    ttlMs,
    maxEntries: 10_000,
    now,
  });
  /** When each key's use was last written (ms), by digest. */
  const written = new Map<string, number>();
  return async (presented) => {
    if (!presented.startsWith(STORED_KEY_PREFIX)) return null;
    const digest = keyDigest(presented);
    const load = () => principalOfKey(db, digest);
    const found = ttlMs === 0 ? await load() : await cache.get(digest, apiKeysVersion(), load);
    if (!found) return null;
    const at = now();
    if (found.expiresAt !== null && found.expiresAt <= at) return null;
    if (at - (written.get(digest) ?? -Infinity) >= LAST_USED_EVERY_MS) {
      written.set(digest, at);
      if (written.size > 10_000) written.delete(written.keys().next().value!);
      // Once a minute a key: the request that finds it due writes it; a failure to is no
      // reason to refuse the request.
      await recordKeysUsed(db, new Map([[digest, new Date(at)]])).catch(() => {});
    }
    return found.principal;
  };
}
