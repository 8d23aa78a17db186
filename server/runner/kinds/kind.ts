/**
 * The runner's half of a kind of probe: how one run is made and judged. The interface's half (the
 * URL form, which fields and checks the kind takes) is `shared/kinds/`.
 *
 * @module
 */
import type { FailedCheck, ProbeExpect } from "@probe/shared";
import type { OutboundOptions } from "../../base/outbound/request.ts";

export const OUTCOMES = ["up", "degraded", "down", "blocked"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What a run needs of a probe. `method`, `headers` and `body` are used by the kinds that use them. */
export interface ProbeTarget {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** A JSON value: a string is sent as-is, anything else as JSON; null sends no body. */
  body: unknown;
  /** Maximum expected latency in ms; slower responses are `degraded`. */
  latency: number | null;
  /** What the response must show (`shared/expect.ts`); null: a status below 400 passes. */
  expect: ProbeExpect | null;
  /** How long the run may take (ms): the probe's own timeout; the executor's when absent. */
  timeoutMs?: number;
}

/** One run as stored: no request headers, no URL, nothing secret. */
export interface RunResult {
  startedAt: Date;
  durationMs: number;
  outcome: Outcome;
  httpStatus: number | null;
  /** A short reason when the outcome is not `up`. */
  error: string | null;
  /** The address connected to (or refused), when resolution got that far. */
  address: string | null;
  /**
   * The assertions the run failed, with what was seen; `[]` when all passed; null when the
   * probe has no `expect` or no response came back (`error` says why). `executeProbe` always
   * sets it; absent (a run made up by a test) means null.
   */
  failedChecks?: FailedCheck[] | null;
}

export interface ExecuteOptions extends OutboundOptions {
  /** Wall-clock time, for `startedAt`. */
  now?: () => number;
  /** Waits before the retry; injectable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
  retryPauseMs?: number;
}

export interface KindExecutor {
  /** The URL schemes it runs, with their colon: those of its `KindRules`. */
  readonly schemes: readonly string[];
  /**
   * One run: connects only where `options.policy` allows (an address refused is a `blocked`
   * outcome), within the probe's timeout (`probe.timeoutMs`, else `options.timeoutMs`). What the
   * target does is a value (`down` with an `error` in words and `failedChecks`); only a defect
   * rejects. `durationMs` is the kind's latency figure, judged against `probe.latency`.
   */
  execute(
    probe: ProbeTarget,
    options: ExecuteOptions,
  ): Promise<RunResult & Required<Pick<RunResult, "failedChecks">>>;
}
