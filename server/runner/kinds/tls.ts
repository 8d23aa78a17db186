/**
 * The runner's half of `tls://host:port` probes: a connection to the address the network policy
 * passed and a TLS handshake with the URL's host as SNI; the certificate must be valid now, for
 * that name, from a trusted chain (the system's authorities, or `options.ca`: see
 * `server/base/outbound/trust.ts`). Then the probe's
 * `body` is sent and the answer read when `expect.body` asks (`conversation.ts`), and
 * `expect.certificate_days` judges the certificate's expiry. The latency is the time to the end
 * of the handshake.
 *
 * The handshake does not reject the certificate itself: it is read first, so that what is wrong
 * with it can be said in words ("certificate expired 3 days ago"); node's verdict on it
 * (`authorized`, the chain and the name) decides, as it would for a verifying client, and
 * nothing is sent to a peer it refused.
 *
 * @module
 */
import { isIP } from "node:net";
import tls from "node:tls";
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
import { certificateTime, handshakeWords, rejectionWords, shortLifeWords } from "./tls_words.ts";
import { judgeAnswer, noAnswer } from "./verdict.ts";
import { trustedAttempt, type TrustOutcome, UNTRUSTED } from "../../base/outbound/trust.ts";

type Handshake = "secure" | "timeout" | { code: string; connected: boolean };

/** Failures of the handshake worth another try: the connection, not the peer's TLS. */
const RETRIED = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "EHOSTUNREACH", "ENETUNREACH"]);

/** An attempt's verdict, and whether the certificate passed or its issuer was unknown. */
interface Attempted extends TrustOutcome {
  verdict: Verdict;
  retry: boolean;
}

/** One connection and handshake to the checked address; the verdict on what it found. */
async function attempt(
  probe: ProbeTarget,
  secureContext: tls.SecureContext,
  { host, address, port }: { host: string; address: string; port: number },
  { signal, timeoutMs, elapsed, now }: AttemptContext,
): Promise<Attempted> {
  const started = elapsed();
  const spent = () => Math.max(0, Math.round(elapsed() - started));
  const where = { address };
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  // node reads the peer's certificate to check its name against the host; the same object is
  // kept for the verdict rather than read a second time.
  let peer: tls.PeerCertificate | undefined;
  const socket = tls.connect({
    host: address,
    port,
    // SNI carries a name, never an address; the certificate is checked against the URL's host.
    servername: isIP(name) ? undefined : name,
    secureContext,
    rejectUnauthorized: false,
    checkServerIdentity: (hostname, certificate) => {
      peer = certificate;
      return tls.checkServerIdentity(hostname, certificate);
    },
  });
  try {
    let connected = false;
    const shaken = await new Promise<Handshake>((resolve) => {
      const onAbort = () => resolve("timeout");
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      socket.once("connect", () => connected = true);
      socket.once("secureConnect", () => {
        signal.removeEventListener("abort", onAbort);
        resolve("secure");
      });
      socket.once("error", (error) => {
        signal.removeEventListener("abort", onAbort);
        resolve({ code: errorCode(error), connected });
      });
    });
    const durationMs = spent();
    const down = (error: string, retry = false, untrusted = false) => ({
      verdict: noAnswer("down", error, { durationMs, ...where }),
      retry,
      passed: false,
      untrusted,
    });
    if (shaken === "timeout") {
      return down(timedOut(timeoutMs, connected ? "in the TLS handshake" : "connecting"));
    }
    if (shaken !== "secure") {
      const words = shaken.connected ? handshakeWords(shaken.code) : socketFailure(shaken.code);
      return down(words, RETRIED.has(shaken.code));
    }
    // A chain node refused is never shown to checkServerIdentity: read it here.
    const certificate = peer ?? socket.getPeerCertificate();
    if (!socket.authorized) {
      const code = String(socket.authorizationError ?? "");
      const words = rejectionWords(code, certificate, name, now);
      return down(words, false, UNTRUSTED.has(code));
    }
    const validTo = certificateTime(certificate.valid_to);
    const body = typeof probe.body === "string" ? probe.body : null;
    const heard = await converse(socket, { body, expect: probe.expect, signal });
    const passed = (error: string) => ({ ...down(error), passed: true });
    if (heard.kind === "timeout") return passed(timedOut(timeoutMs, "waiting for an answer"));
    if (heard.kind === "failed") return passed(socketFailure(heard.code));
    const verdict = judgeAnswer(
      { durationMs, ...where, text: heard.text, certificate: { validTo } },
      probe,
      now,
    );
    const failed = verdict.failedChecks ?? [];
    if (verdict.outcome === "down" && failed.length > 0) {
      const days = probe.expect?.certificate_days;
      const others = failed.filter((f) => f.check !== "certificate_days");
      verdict.error = days === undefined || others.length === failed.length
        ? answerError(failed)
        : shortLifeWords(validTo, now, days) +
          (others.length > 0 ? ` (and ${others.length} more)` : "");
    }
    return { verdict, retry: false, passed: true, untrusted: false };
  } finally {
    socket.destroy();
  }
}

/** Runs a `tls:` probe once, within its timeout (resolution, handshake, retry and answer). */
function executeTls(
  probe: ProbeTarget,
  options: ExecuteOptions,
): Promise<RunResult & Required<Pick<RunResult, "failedChecks">>> {
  return runConnection(
    probe,
    options,
    (target, context) =>
      trustedAttempt(
        options.ca,
        { name: target.host, address: target.address, port: target.port },
        (secureContext) => attempt(probe, secureContext, target, context),
        (tried) => tried,
      ),
  );
}

export const tlsExecutor: KindExecutor = {
  schemes: ["tls:"],
  execute: executeTls,
};
