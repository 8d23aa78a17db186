import { sleep } from "../../base/sleep.ts";

/** Time as the reporter sees it: injected so tests can drive it by hand. */
export interface Clock {
  now(): Date;
  /** Waits `ms` milliseconds; resolves early, without throwing, when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  sleep,
};
