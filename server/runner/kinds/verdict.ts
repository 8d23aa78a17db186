/**
 * The verdict of a run of a kind without HTTP (`tcp:`, `tls:`, `dns:`): what answered, judged by
 * the probe's `expect` (`assertions.ts`) and `latency`, as an HTTP answer is.
 *
 * @module
 */
import type { FailedCheck } from "@probe/shared";
import { evaluate } from "../assertions.ts";
import type { ProbeTarget, RunResult } from "./kind.ts";

/** What a run of such a kind saw when it got an answer. */
export interface Answered {
  durationMs: number;
  address: string | null;
  /** The answer as text (`expect.body` reads it); null when nothing was read. */
  text: string | null;
  /** The answer as `expect.json` reads it (the DNS records); absent: `text` parsed as JSON. */
  json?: unknown;
  /** The peer certificate's expiry, for `tls:`; null otherwise. */
  certificate: { validTo: Date | null } | null;
}

type Verdict = Omit<RunResult, "startedAt"> & Required<Pick<RunResult, "failedChecks">>;

const NAMED_CHECKS = 3;

/** Judges an answer: a failed check is `down`, a pass slower than `latency` `degraded`. */
export function judgeAnswer(
  answered: Answered,
  probe: Pick<ProbeTarget, "latency" | "expect">,
  now: number,
): Verdict {
  const base = {
    durationMs: answered.durationMs,
    address: answered.address,
    httpStatus: null,
  };
  const failedChecks: FailedCheck[] | null = probe.expect === null ? null : evaluate(probe.expect, {
    status: null,
    headers: {},
    body: answered.text,
    json: answered.json === undefined ? undefined : { ok: true, value: answered.json },
    certificate: answered.certificate,
    now,
  });
  if (failedChecks && failedChecks.length > 0) {
    const shown = failedChecks.slice(0, NAMED_CHECKS).map((f) => f.check).join(", ");
    const more = failedChecks.length > NAMED_CHECKS
      ? ` and ${failedChecks.length - NAMED_CHECKS} more`
      : "";
    return { ...base, outcome: "down", error: `assertion failed: ${shown}${more}`, failedChecks };
  }
  if (probe.latency !== null && answered.durationMs > probe.latency) {
    return { ...base, outcome: "degraded", error: `slower than ${probe.latency} ms`, failedChecks };
  }
  return { ...base, outcome: "up", error: null, failedChecks };
}

/** A run that got no answer: `down` (or `blocked` by the network policy), the reason in words. */
export function noAnswer(
  outcome: "down" | "blocked",
  reason: string,
  { durationMs, address }: { durationMs: number; address: string | null },
): Verdict {
  return { outcome, error: reason, durationMs, address, httpStatus: null, failedChecks: null };
}
