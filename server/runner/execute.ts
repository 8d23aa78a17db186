/**
 * Running one probe: its request, one retry after a network-level failure, and the verdict.
 *
 * @module
 */
import { type OutboundOptions, outboundRequest, type OutboundResult } from "../outbound/request.ts";

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

/** The verdict on an exchange, as the issue defines it. */
export function verdictOf(
  result: OutboundResult,
  latency: number | null,
): Pick<RunResult, "outcome" | "httpStatus" | "error" | "address" | "durationMs"> {
  const base = { address: result.address, durationMs: result.durationMs };
  switch (result.kind) {
    case "response": {
      const { status } = result;
      if (status >= 400) {
        return { ...base, outcome: "down", httpStatus: status, error: `HTTP ${status}` };
      }
      if (latency !== null && result.durationMs > latency) {
        return {
          ...base,
          outcome: "degraded",
          httpStatus: status,
          error: `slower than ${latency} ms`,
        };
      }
      return { ...base, outcome: "up", httpStatus: status, error: null };
    }
    case "blocked":
      return { ...base, outcome: "blocked", httpStatus: null, error: result.reason };
    case "timeout":
    case "failed":
      return { ...base, outcome: "down", httpStatus: null, error: result.reason };
  }
}

/**
 * Runs a probe once: a failure below HTTP (DNS, connection, TLS) is retried once after a short
 * pause before it counts as `down`; a timeout, an HTTP error or a refusal by the policy is not.
 */
export async function executeProbe(
  probe: ProbeTarget,
  options: ExecuteOptions,
): Promise<RunResult> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms)));
  const startedAt = new Date(now());
  const request = requestOf(probe);
  let result = await outboundRequest(request, options);
  if (result.kind === "failed" && result.network) {
    await sleep(options.retryPauseMs ?? RETRY_PAUSE_MS);
    result = await outboundRequest(request, options);
  }
  return { startedAt, ...verdictOf(result, probe.latency) };
}
