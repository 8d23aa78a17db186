/**
 * Which certificate authorities an outbound TLS connection trusts, made cheap to ask: the
 * handshakes of `tls://` probes (`server/runner/kinds/tls.ts`) and of `https://` requests
 * (`request.ts`) under a `ca` (`PROBE_CA_FILE` joined to the system's authorities by
 * `server/base/config.ts`, or a test's own authority).
 *
 * Deno's node:tls reads a context's authorities again at every handshake: with the system's and
 * the file's in one, a handshake cost 23 ms of CPU against 2.7 ms with the file's alone (`https:`,
 * measured through node:https on loopback). So such a `ca` becomes two secure contexts, made
 * once: the system's store as node:tls keeps it, and the certificates the system's do not hold.
 * A chain either one passes is trusted, as with both in one. The context that passed a host is
 * tried first for it next time, so a host of a private authority shakes hands once a run after
 * its first. Any other `ca` (a test's own authority alone) is one context, as given.
 *
 * @module
 */
import tls from "node:tls";

/** Refusals another store of authorities may settle: the chain's issuer is not in this one. */
export const UNTRUSTED = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
]);

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;
const pemKey = (pem: string) => pem.replace(/\s+/g, "");

/**
 * The contexts of each `ca` asked for, made once: a process has few (the runner's, the
 * notifications' system store, a test's own authority). Past {@link CAS_KEPT} the oldest goes.
 */
const contextsByCa = new Map<string | undefined, tls.SecureContext[]>();
const CAS_KEPT = 8;

/** The secure contexts trusting `ca` (the system's store when undefined), tried in order. */
export function trustContexts(ca: string | undefined): tls.SecureContext[] {
  const made = contextsByCa.get(ca);
  if (made) return made;
  const system = new Set(tls.rootCertificates.map(pemKey));
  const given = ca?.match(PEM_CERTIFICATE) ?? [];
  const own = given.filter((pem) => !system.has(pemKey(pem)));
  const split = ca !== undefined && own.length > 0 && own.length < given.length;
  const contexts = split
    ? [tls.createSecureContext(), tls.createSecureContext({ ca: own.join("\n") })]
    : [tls.createSecureContext({ ca })];
  if (contextsByCa.size >= CAS_KEPT) contextsByCa.delete(contextsByCa.keys().next().value);
  contextsByCa.set(ca, contexts);
  return contexts;
}

/** Which context last passed the certificate of a host (name, address and port): tried first. */
const passedBy = new Map<string, number>();
const PASSES_KEPT = 10_000;

/** How an attempt went, as far as trust is concerned. */
export interface TrustOutcome {
  /** The certificate passed (the attempt may still have failed after the handshake). */
  passed: boolean;
  /** The handshake was refused for an issuer the context does not know ({@link UNTRUSTED}). */
  untrusted: boolean;
}

/** The peer a handshake is with: the name it is asked for (SNI), its address and port. */
export interface TlsPeer {
  name: string;
  address: string;
  port: number | string;
}

/**
 * `attempt` under the `ca`'s contexts: the first (or the one that passed this peer last) and,
 * when it does not know the chain's issuer, the other. Answers the first attempt that is not
 * such a refusal, else the first's.
 */
export async function trustedAttempt<T>(
  ca: string | undefined,
  peer: TlsPeer,
  attempt: (context: tls.SecureContext) => Promise<T>,
  outcome: (result: T) => TrustOutcome,
): Promise<T> {
  const contexts = trustContexts(ca);
  if (contexts.length === 1) return await attempt(contexts[0]);
  const host = `${peer.name}|${peer.address}|${peer.port}`;
  const last = passedBy.get(host) ?? 0;
  let refused: { result: T } | null = null;
  for (const index of [last, 1 - last]) {
    const result = await attempt(contexts[index]);
    const { passed, untrusted } = outcome(result);
    if (passed) {
      if (passedBy.size >= PASSES_KEPT) passedBy.clear();
      passedBy.set(host, index);
    }
    if (!untrusted) return result;
    refused ??= { result };
  }
  return refused!.result;
}
