/**
 * A token bucket per API key: `perSecond` tokens flow in each second up to `burst`, and each
 * request takes one. Only authenticated requests are counted, so there is one bucket per
 * configured key and the table cannot grow with what callers send.
 */

export type Admission = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Takes a token for the key, or says how many whole seconds until one is there. */
  take(key: string): Admission;
}

export interface RateLimitOptions {
  perSecond: number;
  /** The most tokens a bucket holds; twice `perSecond` unless given. */
  burst?: number;
  /** Milliseconds on a monotonic clock; injectable for tests. */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const ADMITTED: Admission = { ok: true };

/** A limiter, or null when `perSecond` is 0 (no limit). */
export function createRateLimiter(
  { perSecond, burst = perSecond * 2, now = () => performance.now() }: RateLimitOptions,
): RateLimiter | null {
  if (perSecond <= 0) return null;
  const capacity = Math.max(1, burst);
  const perMs = perSecond / 1000;
  const buckets = new Map<string, Bucket>();
  return {
    take(key) {
      const t = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = { tokens: capacity, at: t };
        buckets.set(key, bucket);
      } else {
        bucket.tokens = Math.min(capacity, bucket.tokens + (t - bucket.at) * perMs);
        bucket.at = t;
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return ADMITTED;
      }
      return {
        ok: false,
        retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)),
      };
    },
  };
}
