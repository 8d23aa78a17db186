// @ts-check
/** How numbers and times are shown. Times are in UTC, as the API gives them. */

const NO_DATA = "—";

/**
 * A share from 0 to 1 as a percentage; rounded down, so 99.996% never reads 100%.
 * @param {number | null | undefined} share
 */
export function percent(share) {
  if (share === null || share === undefined) return NO_DATA;
  if (share >= 1) return "100%";
  return `${(Math.floor(share * 10_000) / 100).toFixed(2)}%`;
}

/** @param {number | null | undefined} value */
export function millis(value) {
  if (value === null || value === undefined) return NO_DATA;
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  return `${value} ms`;
}

/**
 * `2026-11-22 14:05:09 UTC`.
 * @param {string | null | undefined} iso
 * @param {{ seconds?: boolean }} [options]
 */
export function utc(iso, { seconds = true } = {}) {
  if (!iso) return NO_DATA;
  const text = new Date(iso).toISOString().replace("T", " ");
  return `${text.slice(0, seconds ? 19 : 16)} UTC`;
}

/**
 * `3 min ago`, from an ISO time.
 * @param {string | null | undefined} iso
 */
export function ago(iso, now = Date.now()) {
  if (!iso) return NO_DATA;
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/**
 * `2 h 5 min`, from seconds.
 * @param {number | null | undefined} seconds
 */
export function duration(seconds) {
  if (seconds === null || seconds === undefined) return NO_DATA;
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** @param {number} n */
export const count = (n) => n.toLocaleString("en");

/**
 * `1 probe`, `3 probes`.
 * @param {number} n
 * @param {string} one
 */
export const plural = (n, one, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;
