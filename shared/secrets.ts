/**
 * What counts as a credential in what the service stores and shows, and how it is masked: header
 * values of credential headers, the password in a URL, every query parameter's value. Read-only keys see stored probes and targets through these rules (see
 * docs/api.md, "Secrets and read-only keys"); the runner uses the header rule for what it records
 * of a response.
 *
 * @module
 */
import { kindOf } from "./kinds/mod.ts";

/** A header value that is not shown. */
export const REDACTED = "<redacted>";

/** A password or query value in a URL that is not shown. */
export const MASKED = "****";

/** Headers that carry credentials whatever their value. */
const SECRET_HEADER_NAMES = ["authorization", "proxy-authorization", "cookie", "set-cookie"];

/**
 * Parts of a header name that say it holds a credential (`X-Api-Key`, `X-Auth-Token`,
 * `X-Signature`), matched anywhere in the name ignoring case. Broad on purpose: masking a harmless value costs less than showing a key.
 */
const SECRET_NAME_PARTS = [
  "token",
  "secret",
  "key",
  "auth",
  "session",
  "cookie",
  "passw",
  "pwd",
  "sig",
  "credential",
];

/**
 * Whether a header's value may be a credential, so that it is never shown to a reader: the
 * credential headers, names with a credential-like part, and the `extra` names (lower case, from
 * `PROBE_SECRET_HEADERS`).
 */
export function isSecretHeader(name: string, extra: readonly string[] = []): boolean {
  const lower = name.toLowerCase();
  return SECRET_HEADER_NAMES.includes(lower) || extra.includes(lower) ||
    SECRET_NAME_PARTS.some((part) => lower.includes(part));
}

/** Headers with the values of credential headers replaced by `<redacted>`. */
export function redactHeaders(
  headers: Record<string, string>,
  extra: readonly string[] = [],
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map((
      [name, value],
    ) => [name, isSecretHeader(name, extra) ? REDACTED : value]),
  );
}

/**
 * A URL with its credentials masked: the password (or a user name standing alone, which is
 * then the credential, as in `https://TOKEN@host/`) and every query parameter's value become
 * `****`. A query value is masked whatever its name: names that hold a credential are too many
 * to list (`?pass=`, `?code=`, `?k=`), so only the names are shown. A query part without `=`
 * (`?3f9a…`) may be a bare token, and a fragment (`#access_token=…`) is never sent but may hold
 * one: both are masked whole. A probe kind whose URL form has no room for a credential
 * (`tcp:`, `tls:`, `dns:`) is shown whole. Everything else is kept as stored, byte for byte; text that is not
 * a URL is returned as it is.
 */
export function maskUrl(url: string): string {
  if (!URL.canParse(url) || kindOf(url)?.urlHoldsSecrets === false) return url;
  const u = new URL(url);
  let changed = false;
  if (u.password !== "") {
    u.password = MASKED;
    changed = true;
  } else if (u.username !== "") {
    u.username = MASKED;
    changed = true;
  }
  if (u.search.length > 1) {
    const parts = u.search.slice(1).split("&").map((part) => {
      const at = part.indexOf("=");
      if (part === "" || at === part.length - 1) return part;
      changed = true;
      return at < 0 ? MASKED : `${part.slice(0, at)}=${MASKED}`;
    });
    u.search = `?${parts.join("&")}`;
  }
  if (u.hash.length > 1) {
    u.hash = MASKED;
    changed = true;
  }
  return changed ? u.href : url;
}
