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
  // One way for a duration everywhere: whole ms below a second, seconds with one decimal from it
  // ("5.0 s", never "5000 ms" beside "10.0 s").
  if (value >= 1000) return `${(value / 1000).toFixed(1)} s`;
  return `${Math.round(value)} ms`;
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

/**
 * How much of a window a probe's history covers, when it is younger than the window (`12 min`),
 * from `history_since` (the start of its oldest run held); null when the history fills the window
 * or there is none.
 * @param {string | null | undefined} historySince
 * @param {number} windowSeconds
 */
export function historySpan(historySince, windowSeconds, now = Date.now()) {
  if (!historySince) return null;
  const seconds = Math.max(0, Math.round((now - Date.parse(historySince)) / 1000));
  return seconds >= windowSeconds ? null : duration(seconds);
}

/**
 * Where a history starts, for a column whose window is longer: `since 14:05` (UTC) the same UTC
 * day as `now`, `since 11-24 14:05` before it.
 * @param {string} iso
 */
export function since(iso, now = Date.now()) {
  const [day, time] = [new Date(iso).toISOString(), new Date(now).toISOString()];
  const at = day.slice(11, 16);
  return day.slice(0, 10) === time.slice(0, 10) ? `since ${at}` : `since ${day.slice(5, 10)} ${at}`;
}

/**
 * A URL with a line-break opportunity after each `/` and `?` (and `&`), so a long one wraps at
 * its parts instead of mid-word: the parts to render, a `null` where a break may go (`<wbr>`).
 * @param {string} url
 * @returns {(string | null)[]}
 */
export function urlParts(url) {
  return url.split(/(?<=[/?&])/).flatMap((part, i) => (i === 0 ? [part] : [null, part]));
}
