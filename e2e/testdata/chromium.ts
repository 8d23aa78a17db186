/**
 * Debian's Chromium for the browser tests (`/docs`, the dashboard, status pages), which .ci/run
 * installs: where it is, how it is started, and whether a test without it is skipped.
 *
 * @module
 */
import assert from "node:assert/strict";

export const CHROMIUM = "/usr/bin/chromium";

/**
 * Headless, and quiet on a machine without a network: without the background-networking flags
 * Chromium tries Google's hosts at every start, and their refusals come many at a time.
 */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const hasChromium = (() => {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
})();

const inCi = Boolean(Deno.env.get("CI"));

/**
 * Whether a browser test is to be skipped: only outside CI, with a warning naming `what`. CI
 * installs Chromium, so there a missing one is a failure ({@link assertChromium}).
 */
export function skipWithoutChromium(what: string): boolean {
  if (hasChromium || inCi) return false;
  console.warn(`${CHROMIUM} is missing: ${what} is not tested (apt-get install chromium)`);
  return true;
}

export function assertChromium(): void {
  assert.ok(hasChromium, `${CHROMIUM} is missing: .ci/run installs it with apt-get`);
}
