/**
 * The runner's half of `tcp://host:port` probes: the host checked by the network policy, a
 * connection to the one address it passed, the probe's `body` sent and the answer read when
 * `expect.body` asks (`conversation.ts`). Up when the connection is accepted (and the answer
 * passes); the latency is the connect time. A failure below the application (refused, reset,
 * unreachable, a name that does not resolve) is retried once after a short pause, as HTTP's is.
 *
 * @module
 */
import net from "node:net";
import type { FailedCheck } from "@probe/shared";
import { checkHost } from "../../outbound/network_policy.ts";
import type { ExecuteOptions, ProbeTarget, RunResult } from "../execute.ts";
import { converse, errorCode } from "./conversation.ts";
import { RETRY_PAUSE_MS } from "./http.ts";
import type { KindExecutor } from "./kind.ts";
import { judgeAnswer, noAnswer } from "./verdict.ts";

type Verdict = Omit<RunResult, "startedAt"> & Required<Pick<RunResult, "failedChecks">>;

/** Socket errors said in words; `retry`: worth one more try (below the application). */
const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  ECONNABORTED: "connection aborted",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
  ETIMEDOUT: "connection timed out",
};

const failure = (code: string) => SOCKET_ERRORS[code] ?? `network error${code ? ` ${code}` : ""}`;

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
const timedOut = (ms: number, stage: string) => `timed out after ${ms} ms ${stage}`;

/**
 * One attempt: connect to `address`, converse, judge. `retry` marks failures worth another try.
 * Every socket it opens is destroyed before it resolves.
 */
async function attempt(
  probe: ProbeTarget,
  target: { address: string; port: number },
  { signal, timeoutMs, elapsed, now }: {
    signal: AbortSignal;
    timeoutMs: number;
    elapsed: () => number;
    now: number;
  },
): Promise<{ verdict: Verdict; retry: boolean }> {
  const started = elapsed();
  const spent = () => Math.max(0, Math.round(elapsed() - started));
  const where = { address: target.address };
  const socket = net.connect({ host: target.address, port: target.port });
  try {
    const connected = await new Promise<"connected" | "timeout" | { code: string }>((resolve) => {
      const onAbort = () => resolve("timeout");
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      socket.once("connect", () => {
        signal.removeEventListener("abort", onAbort);
        resolve("connected");
      });
      socket.once("error", (error) => {
        signal.removeEventListener("abort", onAbort);
        resolve({ code: errorCode(error) });
      });
    });
    const durationMs = spent();
    if (connected === "timeout") {
      return {
        verdict: noAnswer("down", timedOut(timeoutMs, "connecting"), { durationMs, ...where }),
        retry: false,
      };
    }
    if (connected !== "connected") {
      return {
        verdict: noAnswer("down", failure(connected.code), { durationMs, ...where }),
        retry: true,
      };
    }
    const body = typeof probe.body === "string" ? probe.body : null;
    const heard = await converse(socket, { body, expect: probe.expect, signal });
    if (heard.kind === "timeout") {
      return {
        verdict: noAnswer("down", timedOut(timeoutMs, "waiting for an answer"), {
          durationMs,
          ...where,
        }),
        retry: false,
      };
    }
    if (heard.kind === "failed") {
      return {
        verdict: noAnswer("down", failure(heard.code), { durationMs, ...where }),
        retry: true,
      };
    }
    const verdict = judgeAnswer(
      { durationMs, ...where, text: heard.text, certificate: null },
      probe,
      now,
    );
    if (verdict.outcome === "down" && verdict.failedChecks?.length) {
      verdict.error = answerError(verdict.failedChecks);
    }
    return { verdict, retry: false };
  } finally {
    socket.destroy();
  }
}

/**
 * Runs a `tcp:` probe once, within its timeout (resolution, connection, retry and answer
 * together).
 */
async function executeTcp(
  probe: ProbeTarget,
  options: ExecuteOptions,
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
      const done = await attempt(probe, { address: check.address, port }, {
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

export const tcpExecutor: KindExecutor = {
  schemes: ["tcp:"],
  execute: executeTcp,
};
