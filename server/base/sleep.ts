/**
 * Waiting, for the service's loops and retries: `ms` milliseconds, or less when `signal` aborts
 * (at once when it already has). It never throws, and leaves no listener on the signal behind,
 * so a long-lived signal can be given to many waits.
 *
 * @module
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener("abort", done, { once: true });
  });
}
