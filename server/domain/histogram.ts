/**
 * Latency histograms with fixed buckets, kept per probe and hour in the rollups so that
 * percentiles over long windows survive the pruning of raw results.
 *
 * @module
 */

/**
 * Upper bounds (inclusive, ms) of the buckets; the last is open. Frozen: stored rollups are
 * arrays indexed by these buckets, so changing them needs a migration of the data.
 */
export const BUCKET_BOUNDS: readonly number[] = Object.freeze([
  1,
  2,
  3,
  4,
  5,
  6,
  8,
  10,
  12,
  15,
  20,
  25,
  30,
  40,
  50,
  60,
  80,
  100,
  125,
  150,
  200,
  250,
  300,
  400,
  500,
  600,
  800,
  1000,
  1250,
  1500,
  2000,
  2500,
  3000,
  4000,
  5000,
  6000,
  8000,
  10000,
  12500,
  15000,
  20000,
  25000,
  30000,
  40000,
  50000,
  60000,
  80000,
  100000,
  120000,
  Infinity,
]);

export const BUCKETS = BUCKET_BOUNDS.length;

/** The bucket a latency falls in. */
export function bucketOf(ms: number): number {
  let lo = 0;
  let hi = BUCKETS - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ms <= BUCKET_BOUNDS[mid]) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export function emptyHistogram(): number[] {
  return new Array(BUCKETS).fill(0);
}

/** Adds `from` into `into`, bucket by bucket. */
export function addInto(into: number[], from: readonly number[]): number[] {
  for (let i = 0; i < BUCKETS; i++) into[i] += from[i] ?? 0;
  return into;
}

/**
 * The nearest-rank percentile `p` (0–1) estimated from a histogram: the bucket holding that
 * rank is found exactly, and the value interpolated inside it, never above `max`. The error is
 * bounded by the bucket's width (about a quarter of the value). Null when the histogram is empty.
 */
export function percentileOf(histogram: readonly number[], p: number, max: number): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let before = 0;
  for (let i = 0; i < BUCKETS; i++) {
    const count = histogram[i] ?? 0;
    if (before + count >= rank) {
      const lower = i === 0 ? 0 : BUCKET_BOUNDS[i - 1];
      const upper = Math.min(BUCKET_BOUNDS[i], Math.max(max, lower));
      const value = lower + (upper - lower) * ((rank - before) / count);
      return Math.min(Math.round(value), max);
    }
    before += count;
  }
  return max;
}
