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
import type { ExecuteOptions, KindExecutor, ProbeTarget, RunResult } from "./kind.ts";
import {
  answerError,
  type AttemptContext,
  runConnection,
  socketFailure,
  timedOut,
  type Verdict,
} from "./connection.ts";
import { converse, errorCode } from "./conversation.ts";
import { judgeAnswer, noAnswer } from "./verdict.ts";

/**
 * One attempt: connect to `address`, converse, judge. `retry` marks failures worth another try.
 * Every socket it opens is destroyed before it resolves.
 */
async function attempt(
  probe: ProbeTarget,
  target: { address: string; port: number },
  { signal, timeoutMs, elapsed, now }: AttemptContext,
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
        verdict: noAnswer("down", socketFailure(connected.code), { durationMs, ...where }),
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
        verdict: noAnswer("down", socketFailure(heard.code), { durationMs, ...where }),
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
function executeTcp(
  probe: ProbeTarget,
  options: ExecuteOptions,
): Promise<RunResult & Required<Pick<RunResult, "failedChecks">>> {
  return runConnection(probe, options, (target, context) => attempt(probe, target, context));
}

export const tcpExecutor: KindExecutor = {
  schemes: ["tcp:"],
  execute: executeTcp,
};
