/**
 * What is wrong with a TLS peer, in the words a person uses: "certificate expired 3 days ago",
 * "name mismatch: the certificate is for other.test", "untrusted certificate chain
 * (self-signed)", "TLS handshake failed". The `tls:` kind stores them as its runs' errors.
 *
 * HTTP's runs keep their `TLS: <code>` errors, which the dashboard words itself
 * (server/ui/failure_words.js): changing them would change what the interface answers.
 *
 * @module
 */
import type { PeerCertificate } from "node:tls";
import { truncate } from "../assertions.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/** Names of the certificate shown at most; the rest are counted. */
const NAMES_SHOWN = 3;

/** A date as `2026-11-25` (UTC). */
const day = (at: Date) => at.toISOString().slice(0, 10);

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A certificate's date field as a time; null when absent or unreadable. */
export function certificateTime(text: string | undefined): Date | null {
  const time = typeof text === "string" ? Date.parse(text) : NaN;
  return Number.isNaN(time) ? null : new Date(time);
}

/** "certificate expired 3 days ago (2026-11-25)", or "less than a day ago". */
function expiredWords(validTo: Date, now: number): string {
  const days = Math.floor((now - validTo.getTime()) / DAY_MS);
  const ago = days < 1 ? "less than a day ago" : `${plural(days, "day")} ago`;
  return `certificate expired ${ago} (${day(validTo)})`;
}

/**
 * The names a certificate is for (its subject alternative names, else its common name), as a
 * short list. They come from the peer: only name-like text is kept, each name and the list cut.
 */
function namesOf(certificate: PeerCertificate): string[] {
  const alt = typeof certificate.subjectaltname === "string"
    ? certificate.subjectaltname.split(",").map((entry) => entry.trim())
      .map((entry) => /^(?:DNS|IP Address):(.*)$/.exec(entry)?.[1] ?? "")
    : [];
  const common = certificate.subject?.CN;
  const names = alt.length > 0 ? alt : typeof common === "string" ? [common] : [];
  return names.filter((n) => /^[A-Za-z0-9*._:-]+$/.test(n)).map((n) => truncate(n, 64));
}

/** "other.test", "a.test, b.test, c.test and 2 more". */
function listed(names: readonly string[]): string {
  const shown = names.slice(0, NAMES_SHOWN).join(", ");
  return names.length > NAMES_SHOWN ? `${shown} and ${names.length - NAMES_SHOWN} more` : shown;
}

/** The chain errors (OpenSSL's verification codes, as node names them) in words. */
const CHAIN_WORDS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: "untrusted certificate chain (self-signed)",
  SELF_SIGNED_CERT_IN_CHAIN: "untrusted certificate chain (self-signed root)",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "untrusted certificate chain (issuer unknown)",
  UNABLE_TO_GET_ISSUER_CERT: "untrusted certificate chain (issuer unknown)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "untrusted certificate chain (issuer unknown)",
  CERT_UNTRUSTED: "untrusted certificate chain",
  CERT_SIGNATURE_FAILURE: "untrusted certificate chain (bad signature)",
  CERT_CHAIN_TOO_LONG: "untrusted certificate chain (too long)",
  INVALID_CA: "untrusted certificate chain (an issuer is not a CA)",
  CERT_REVOKED: "certificate revoked",
  INVALID_PURPOSE: "certificate not meant for a TLS server",
};

/**
 * Why a verifying client refuses the peer's certificate, in words. `code` is node's
 * `authorizationError`; the certificate's own dates come first, since a verifier may name an
 * expired certificate only as one it could not verify. `host` is the name checked (the URL's).
 */
export function rejectionWords(
  code: string,
  certificate: PeerCertificate,
  host: string,
  now: number,
): string {
  const validTo = certificateTime(certificate.valid_to);
  const validFrom = certificateTime(certificate.valid_from);
  if (validTo !== null && (validTo.getTime() < now || code === "CERT_HAS_EXPIRED")) {
    return expiredWords(validTo, now);
  }
  if (validFrom !== null && (validFrom.getTime() > now || code === "CERT_NOT_YET_VALID")) {
    return `certificate not valid until ${day(validFrom)}`;
  }
  if (code === "CERT_HAS_EXPIRED") return "certificate expired";
  if (code === "CERT_NOT_YET_VALID") return "certificate not valid yet";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    const names = namesOf(certificate);
    return names.length > 0
      ? `name mismatch: the certificate is for ${listed(names)}`
      : `name mismatch: the certificate is not for ${host}`;
  }
  return CHAIN_WORDS[code] ?? (code ? `untrusted certificate (${code})` : "untrusted certificate");
}

/**
 * A failed `certificate_days` check in words: "certificate expires in 20 days, expected at
 * least 30 more".
 */
export function shortLifeWords(validTo: Date | null, now: number, days: number): string {
  if (validTo === null) return "the certificate's expiry could not be read";
  const left = Math.floor((validTo.getTime() - now) / DAY_MS);
  const when = left < 1 ? "expires within a day" : `expires in ${plural(left, "day")}`;
  return `certificate ${when} (${day(validTo)}), expected at least ${days} more`;
}

/** A handshake that failed before any certificate was judged, in words. */
export function handshakeWords(code: string): string {
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "ERR_SSL_HTTP_REQUEST") {
    return "TLS handshake failed: the answer was not TLS";
  }
  if (code === "ECONNRESET" || code === "EPIPE") {
    return "TLS handshake failed: the connection was closed";
  }
  return "TLS handshake failed";
}
