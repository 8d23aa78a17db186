/**
 * The runner's half of `http://` and `https://` probes: the request (redirects followed under
 * the network policy), one retry after a failure below HTTP, and the verdict on the answer.
 *
 * @module
 */
import type { FailedCheck } from "@probe/shared";
import { outboundRequest, type OutboundResult } from "../../base/outbound/request.ts";
import { evaluate, needsBody } from "../assertions.ts";
import type { ExecuteOptions, KindExecutor, ProbeTarget, RunResult } from "./kind.ts";

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
async function executeHttp(
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

export const httpExecutor: KindExecutor = {
  schemes: ["http:", "https:"],
  execute: executeHttp,
};
