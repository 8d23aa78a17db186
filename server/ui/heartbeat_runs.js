// @ts-check
/**
 * A heartbeat's runs, from its kept pings: each `/start` paired with the success or failure that
 * ended it, drawn as one bar per run (height: its run time), with the same in words.
 */
import { view } from "./view.js";
import { millis, utc } from "./format.js";
/** @import { HeartbeatPing } from "./api_types.d.ts" */

/** @typedef {{ at: string, ms: number, ok: boolean }} Run */

/** Whether a ping ends a run well (a success, or exit code 0), badly, or not at all. */
const ending = (/** @type {HeartbeatPing} */ p) =>
  p.kind === "success" || (p.kind === "exit" && p.exit_code === 0)
    ? "ok"
    : p.kind === "fail" || p.kind === "exit"
    ? "failed"
    : null;

/**
 * The runs the pings show, oldest first: a start and the next success or failure after it.
 * @param {HeartbeatPing[]} pings the latest first, as the API answers them
 * @returns {Run[]}
 */
export function runsOf(pings) {
  /** @type {Run[]} */
  const runs = [];
  /** @type {number | null} */
  let started = null;
  for (const p of [...pings].reverse()) {
    if (p.kind === "start") {
      started = Date.parse(p.at);
      continue;
    }
    const end = ending(p);
    if (end === null || started === null) continue;
    runs.push({ at: p.at, ms: Date.parse(p.at) - started, ok: end === "ok" });
    started = null;
  }
  return runs;
}

/** The runs in a sentence: how many, the shortest, the longest and the latest. */
export function runsSummary(/** @type {Run[]} */ runs) {
  if (runs.length === 0) {
    return "No timed runs among the kept pings: a run is timed from a /start ping to its success.";
  }
  const times = runs.map((r) => r.ms);
  const failed = runs.filter((r) => !r.ok).length;
  return `${runs.length} timed ${runs.length === 1 ? "run" : "runs"}${
    failed ? ` (${failed} failed)` : ""
  }: shortest ${millis(Math.min(...times))}, longest ${millis(Math.max(...times))}, latest ${
    millis(times[times.length - 1])
  }.`;
}

/**
 * One bar per run, oldest on the left: green a success, red a failure; height its run time.
 * @param {{ runs: Run[] }} props
 */
export function RunTimeChart({ runs }) {
  if (runs.length === 0) return null;
  const longest = Math.max(1, ...runs.map((r) => r.ms));
  const width = Math.max(runs.length * 6, 60);
  return view`<svg class="run-times" viewBox=${`0 0 ${width} 60`} preserveAspectRatio="none"
      role="img" aria-label=${runsSummary(runs)} data-runs=${runs.length}>
      ${
    runs.map((r, i) => {
      const height = Math.max(2, Math.round((r.ms / longest) * 58));
      return view`<rect x=${i * 6 + 1} y=${60 - height} width="4" height=${height}
          class=${r.ok ? "o-up" : "o-down"}><title>${utc(r.at)}: ${millis(r.ms)}${
        r.ok ? "" : ", failed"
      }</title></rect>`;
    })
  }
    </svg>`;
}
