// @ts-check
/**
 * A probe whose last run the network policy refused: shown as blocked rather than by its state,
 * with why and the setting that lets it run. Such runs are not in its uptime or bars (the API
 * counts them apart), so "blocked" is the whole story of a probe that was never tried.
 */
import { view } from "./view.js";

/** The policy's reason, as the runner words it: `blocked: 127.0.0.1 is loopback (not in …)`. */
const REASON = /^blocked: (\S+) is (.+) \(not in PROBE_ALLOW_NETWORKS\)$/;

/**
 * A blocked run's reason in words, with the setting that opens the address.
 * @param {string} reason the run's error, as the overview's `blocked_reason` gives it
 */
export function blockedWords(reason) {
  const found = REASON.exec(reason);
  if (!found) {
    return `Not run: ${reason}. PROBE_ALLOW_NETWORKS opens a network to probes.`;
  }
  const [, address, range] = found;
  return `Not run: the network policy refuses ${address} (${range}). ` +
    `PROBE_ALLOW_NETWORKS=${address} where the probe runs lets it through.`;
}

/**
 * The badge that stands for the state of a blocked probe.
 * @param {{ reason: string }} props
 */
export function BlockedBadge({ reason }) {
  return view`<span class="state state-blocked" title=${blockedWords(reason)}>blocked</span>`;
}

/**
 * Why the probe is blocked and what opens it, under its name.
 * @param {{ reason: string }} props
 */
export function BlockedNote({ reason }) {
  return view`<span class="blocked-note">${blockedWords(reason)}</span>`;
}
