/**
 * Running one probe: its request, one retry after a network-level failure, and the verdict.
 *
 * @module
 */
import type { FailedCheck, ProbeExpect } from "@probe/shared";
import { type OutboundOptions, outboundRequest, type OutboundResult } from "../outbound/request.ts";
import { evaluate, needsBody } from "./assertions.ts";

export const OUTCOMES = ["up", "degraded", "down", "blocked"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What a run needs of a probe. */
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

export const RETRY_PAUSE_MS = 500;

/** The request a probe sends: a JSON body goes as JSON unless its headers name a content type. */
export function requestOf(probe: ProbeTarget) {
  const headers = { ...probe.headers };
  let body: string | null = null;
  if (probe.body !== null && probe.body !== undefined) {
    if (typeof probe.body === "string") {
      body = probe.body;
    } else {
      body = JSON.stringify(probe.body);
      const named = Object.keys(headers).some((h) => h.toLowerCase() === "content-type");
      if (!named) headers["content-type"] = "application/json";
    }
  }
  return { url: probe.url, method: probe.method, headers, body };
}

/** Failed checks named in a run's `error`; the rest are counted. */
const NAMED_CHECKS = 3;

/** A short error for failed checks: the default status rule as `HTTP 500`, others by name. */
function errorOf(failed: readonly FailedCheck[], status: number, explicitStatus: boolean): string {
  const parts: string[] = [];
  let named = failed;
  if (!explicitStatus && failed.some((f) => f.check === "status")) {
    parts.push(`HTTP ${status}`);
    named = failed.filter((f) => f.check !== "status");
  }
  if (named.length > 0) {
    const shown = named.slice(0, NAMED_CHECKS).map((f) => f.check).join(", ");
    const more = named.length > NAMED_CHECKS ? ` and ${named.length - NAMED_CHECKS} more` : "";
    parts.push(`assertion failed: ${shown}${more}`);
  }
  return parts.join("; ");
}

/**
 * The verdict on an exchange. Without `expect`, a status below 400 passes; with it, every
 * assertion must pass (a `status` list replaces the default rule), and any failure is `down`.
 * A passing response slower than `latency` is `degraded`. `now` dates the certificate check.
 */
export function verdictOf(
  result: OutboundResult,
  probe: Pick<ProbeTarget, "latency" | "expect">,
  now: number = Date.now(),
): Required<
  Pick<RunResult, "outcome" | "httpStatus" | "error" | "address" | "durationMs" | "failedChecks">
> {
  const base = { address: result.address, durationMs: result.durationMs };
  switch (result.kind) {
    case "response": {
      const { status } = result;
      const { expect, latency } = probe;
      const failedChecks = expect === null ? null : evaluate(expect, {
        status,
        headers: result.headers,
        body: result.body === null ? null : new TextDecoder().decode(result.body),
        certificate: result.certificate,
        now,
      });
      const passed = failedChecks === null ? status < 400 : failedChecks.length === 0;
      if (!passed) {
        const error = failedChecks === null
          ? `HTTP ${status}`
          : errorOf(failedChecks, status, expect?.status !== undefined);
        return { ...base, outcome: "down", httpStatus: status, error, failedChecks };
      }
      if (latency !== null && result.durationMs > latency) {
        return {
          ...base,
          outcome: "degraded",
          httpStatus: status,
          error: `slower than ${latency} ms`,
          failedChecks,
        };
      }
      return { ...base, outcome: "up", httpStatus: status, error: null, failedChecks };
    }
    case "blocked":
      return {
        ...base,
        outcome: "blocked",
        httpStatus: null,
        error: result.reason,
        failedChecks: null,
      };
    case "timeout":
    case "failed":
      return {
        ...base,
        outcome: "down",
        httpStatus: null,
        error: result.reason,
        failedChecks: null,
      };
  }
}

/**
 * Runs a probe once: a failure below HTTP (DNS, connection, TLS) is retried once after a short
 * pause before it counts as `down`; a timeout, an HTTP error or a refusal by the policy is not.
 */
export async function executeProbe(
  probe: ProbeTarget,
  options: ExecuteOptions,
): Promise<RunResult & Required<Pick<RunResult, "failedChecks">>> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms)));
  const startedAt = new Date(now());
  const request = requestOf(probe);
  const outbound = {
    ...options,
    timeoutMs: probe.timeoutMs ?? options.timeoutMs,
    keepBody: needsBody(probe.expect),
    readCertificate: probe.expect?.certificate_days !== undefined,
  };
  let result = await outboundRequest(request, outbound);
  if (result.kind === "failed" && result.network) {
    await sleep(options.retryPauseMs ?? RETRY_PAUSE_MS);
    result = await outboundRequest(request, outbound);
  }
  return { startedAt, ...verdictOf(result, probe, startedAt.getTime()) };
}
