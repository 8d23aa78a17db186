/**
 * A run of a kind that opens a connection (`tcp:`, `tls:`): the host checked by the network
 * policy, one attempt to the one address it passed, retried once after a short pause when it
 * failed below the application (refused, reset, unreachable, a name that does not resolve), as
 * HTTP's is; all within the probe's timeout.
 *
 * @module
 */
import type { FailedCheck } from "@probe/shared";
import { checkHost } from "../../base/outbound/network_policy.ts";
import { ERROR_REASONS } from "../../base/outbound/request.ts";
import type { ExecuteOptions, ProbeTarget, RunResult } from "./kind.ts";
import { RETRY_PAUSE_MS } from "./http.ts";
import { noAnswer } from "./verdict.ts";

export type Verdict = Omit<RunResult, "startedAt"> & Required<Pick<RunResult, "failedChecks">>;

/** What one attempt knows of its run. */
export interface AttemptContext {
  /** Aborts when the run's time is up. */
  signal: AbortSignal;
  /** The run's timeout (ms), for words. */
  timeoutMs: number;
  /** A monotonic clock (ms), for durations. */
  elapsed: () => number;
  /** When the run started (wall clock, ms), for the checks. */
  now: number;
}

/**
 * One attempt at the checked `address`: its verdict, and whether the failure is worth one more
 * try. Every socket it opens is destroyed before it resolves.
 */
export type Attempt = (
  target: { host: string; address: string; port: number },
  context: AttemptContext,
) => Promise<{ verdict: Verdict; retry: boolean }>;

/** A socket error (`errorCode` of it) in words: "connection refused". */
export const socketFailure = (code: string) =>
  ERROR_REASONS[code] ?? `network error${code ? ` ${code}` : ""}`;

/** The host (IPv6 without brackets) and port of a stored `tcp:`/`tls:` URL. */
export function hostPortOf(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port) };
}

/**
 * The error of an answer that failed its checks, in words: what the answer did not contain (or
 * did), the first failed check, with how many more.
 */
export function answerError(failed: readonly FailedCheck[]): string {
  const [first] = failed;
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more)` : "";
  let m;
  if ((m = /^body contains (.+)$/s.exec(first.expected))) {
    return `connected, but the answer did not contain ${m[1]}${more}`;
  }
  if ((m = /^body does not contain (.+)$/s.exec(first.expected))) {
    return `connected, but the answer contained ${m[1]}${more}`;
  }
  return `connected, but ${first.expected}${more}`;
}

/** A stage's timeout in words: "timed out after 5000 ms connecting". */
export const timedOut = (ms: number, stage: string) => `timed out after ${ms} ms ${stage}`;

/** Runs a connecting kind's probe once, within its timeout (resolution, attempts and retry). */
export async function runConnection(
  probe: ProbeTarget,
  options: ExecuteOptions,
  attempt: Attempt,
): Promise<RunResult & Required<Pick<RunResult, "failedChecks">>> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms)));
  const elapsed = options.elapsed ?? (() => performance.now());
  const startedAt = new Date(now());
  const timeoutMs = probe.timeoutMs ?? options.timeoutMs;
  const started = elapsed();
  const spent = () => Math.max(0, Math.round(elapsed() - started));
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), Math.max(0, timeoutMs));
  const { signal } = abort;
  const result = (verdict: Verdict) => ({ startedAt, ...verdict });
  try {
    const { host, port } = hostPortOf(probe.url);
    let last: Verdict | null = null;
    for (let tries = 0; tries < 2; tries++) {
      if (tries > 0) await sleep(options.retryPauseMs ?? RETRY_PAUSE_MS);
      const check = await Promise.race([
        checkHost(host, { policy: options.policy, resolve: options.resolve }),
        new Promise<null>((r) => {
          if (signal.aborted) r(null);
          signal.addEventListener("abort", () => r(null), { once: true });
        }),
      ]);
      if (check === null) {
        return result(
          last ?? noAnswer("down", timedOut(timeoutMs, "resolving the host name"), {
            durationMs: spent(),
            address: null,
          }),
        );
      }
      if (!check.ok) {
        const outcome = check.kind === "blocked" ? "blocked" : "down";
        const address = check.kind === "blocked" ? check.address : null;
        last = noAnswer(outcome, check.reason, { durationMs: spent(), address });
        if (check.kind !== "dns") break;
        continue;
      }
      if (signal.aborted && last) break;
      options.beforeRequest?.();
      const done = await attempt({ host, address: check.address, port }, {
        signal,
        timeoutMs,
        elapsed,
        now: startedAt.getTime(),
      });
      last = done.verdict;
      if (!done.retry) break;
    }
    return result(last!);
  } finally {
    clearTimeout(timer);
  }
}
