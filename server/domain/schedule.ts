/**
 * When probes are due. Each probe runs on a grid of its own: every `interval`, shifted by an
 * offset derived from its internal key, so that many probes spread over the interval instead
 * of firing together. Pure functions over millisecond timestamps.
 *
 * @module
 */

const GOLDEN = 0.6180339887498949;

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

const multipliers = new Map<number, number>();

/** The multiplier nearest to interval × golden ratio that is coprime with the interval. */
export function multiplierFor(intervalMs: number): number {
  let m = multipliers.get(intervalMs);
  if (m === undefined) {
    m = Math.round(intervalMs * GOLDEN);
    while (gcd(m, intervalMs) !== 1) m++;
    multipliers.set(intervalMs, m);
  }
  return m;
}

/**
 * A probe's offset inside the interval, from its key: `key × m mod interval` with m near
 * interval × golden ratio. Consecutive keys land far apart and any run of keys covers the
 * interval evenly (the three-distance property); `interval` consecutive keys take distinct
 * offsets. Integer arithmetic stays exact: both factors are below the interval (≤ 86.4e6).
 */
export function offsetOf(key: number | bigint | string, intervalMs: number): number {
  const k = Number(BigInt(key) % BigInt(intervalMs));
  return (k * multiplierFor(intervalMs)) % intervalMs;
}

/**
 * How long after a (re)start a probe that was already overdue is claimed: its offset's share of
 * `spreadMs` (the SQL of `claimDue` computes the same), so overdue probes start spread, each at
 * a fixed point, rather than all at once.
 */
export function restartDelay(
  key: number | bigint | string,
  intervalMs: number,
  spreadMs: number,
): number {
  return offsetOf(key, intervalMs) * (spreadMs / intervalMs);
}

/** The first time strictly after `t` on the grid `offset + n × interval`. */
export function gridAfter(t: number, offsetMs: number, intervalMs: number): number {
  const n = Math.floor((t - offsetMs) / intervalMs) + 1;
  return offsetMs + n * intervalMs;
}

/**
 * When a probe is next due after a run that was due at `due` and finished at `now`: the next
 * grid point, even if that is already past (a late run is made up at once), unless the runner
 * fell more than one interval behind; then missed runs are skipped, not run in a burst.
 */
export function nextDue(
  { due, now, offsetMs, intervalMs }: {
    due: number;
    now: number;
    offsetMs: number;
    intervalMs: number;
  },
): number {
  const next = gridAfter(due, offsetMs, intervalMs);
  return next > now - intervalMs ? next : gridAfter(now, offsetMs, intervalMs);
}
