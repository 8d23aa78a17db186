/**
 * Token buckets by key: `perSecond` tokens flow in each second up to `burst`, and each request
 * takes one (a tRPC batch one per call). Two limiters use it: one per API key, counting
 * authenticated requests (one bucket per configured key), and one per client address, counting
 * failed key checks (bounded by `maxKeys`, since callers choose their addresses).
 */

export type Admission = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Takes `cost` tokens (1 by default) for the key, or says how many whole seconds until they are there. */
  take(key: string, cost?: number): Admission;
  /**
   * Takes `cost` tokens for work already let in (run-now's redirect hops): always, even below
   * zero, so that the key's next requests are refused until the bucket has filled again.
   */
  charge(key: string, cost: number): void;
}

export interface RateLimitOptions {
  perSecond: number;
  /** The most tokens a bucket holds; twice `perSecond` unless given. */
  burst?: number;
  /** Milliseconds on a monotonic clock; injectable for tests. */
  now?: () => number;
  /**
   * The most keys tracked at once (for keys a caller chooses, such as addresses); past it the
   * key seen least recently is forgotten. Unbounded when absent.
   */
  maxKeys?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const ADMITTED: Admission = { ok: true };

/** A limiter, or null when `perSecond` is 0 (no limit). */
export function createRateLimiter(
  { perSecond, burst = perSecond * 2, now = () => performance.now(), maxKeys = Infinity }:
    RateLimitOptions,
): RateLimiter | null {
  if (perSecond <= 0) return null;
  const capacity = Math.max(1, burst);
  const perMs = perSecond / 1000;
  const buckets = new Map<string, Bucket>();
  const bounded = maxKeys !== Infinity;
  /** The key used last: in a bounded map, its last entry (an unbounded one is never reordered). */
  let last: string | undefined;
  /** The key's bucket, filled for the time since it was last used. */
  function bucketOf(key: string): Bucket {
    const t = now();
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { tokens: capacity, at: t };
      if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value!);
      buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(capacity, bucket.tokens + (t - bucket.at) * perMs);
      bucket.at = t;
      // A bounded map stays in order of last use, so that the least recent key is forgotten:
      // the key moves to the end unless it is there. Each move leaves a hole that the map's
      // table is rebuilt to drop, every few requests of a busy key.
      if (bounded && key !== last) {
        buckets.delete(key);
        buckets.set(key, bucket);
      }
    }
    last = key;
    return bucket;
  }
  return {
    charge(key, cost) {
      bucketOf(key).tokens -= cost;
    },
    take(key, cost = 1) {
      const bucket = bucketOf(key);
      if (bucket.tokens >= cost) {
        bucket.tokens -= cost;
        return ADMITTED;
      }
      return {
        ok: false,
        retryAfterSeconds: Math.max(1, Math.ceil((cost - bucket.tokens) / perSecond)),
      };
    },
  };
}
