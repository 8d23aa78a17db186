/** How one attempt to send a notification over one channel ended: a value, never an exception. */
export interface DeliveryResult {
  outcome: "delivered" | "failed" | "not_configured";
  /** Requests or connections made; 0 when nothing was sent. */
  attempts: number;
  /**
   * Why it failed, in words safe to store, log and show: a summary built from error codes and
   * kinds (`smtp: authentication failed (535)`, `tls: certificate not trusted`, `HTTP 503`).
   * Never the remote peer's text (a hostile server can echo credentials into it), nor a URL.
   */
  error?: string;
  /** A failure retrying cannot mend (the vendor refused the request itself): not retried. */
  final?: true;
  /** The vendor asked to wait this long before the next attempt (`Retry-After`). */
  retryAfterMs?: number;
}

/** Removes every URL (which may carry tokens or credentials) from an error message. */
export function redactUrls(message: string): string {
  return message.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s)"']*/gi, "<url>");
}

/** An error code fit for a summary (`ECONNREFUSED`, `ERR_SSL_…`); null for anything else. */
export function codeOf(value: unknown): string | null {
  return typeof value === "string" && /^[A-Z][A-Z0-9_]{0,47}$/.test(value) ? value : null;
}

/** A TLS failure in fixed words, from the code Node's TLS layer gives it; null when not TLS. */
export function tlsSummary(code: string): string | null {
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return "tls: certificate does not match the host name";
  }
  if (code === "CERT_HAS_EXPIRED") return "tls: certificate expired";
  if (code === "CERT_NOT_YET_VALID") return "tls: certificate not yet valid";
  if (/SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|UNTRUSTED|REJECTED|INVALID_CA|CHAIN/.test(code)) {
    return "tls: certificate not trusted";
  }
  if (/CERT|TLS|SSL|ALPN|HANDSHAKE/.test(code)) return "tls: handshake failed";
  return null;
}

/** Socket and name resolution failures, by code, in fixed words. */
export const SOCKET_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  ECONNABORTED: "connection aborted",
  ETIMEDOUT: "timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  EAI_NONAME: "host not found",
};
