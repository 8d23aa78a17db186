/**
 * What a read-only key sees of stored credentials: the one presenter every query answer that
 * holds a probe's URL or headers, or a target's URL, goes through (`server/procedures/shown.ts` picks
 * it by the key's scope). A write key sees what is stored, as it must to rewrite it.
 *
 * - Probe header values of credential headers (`isSecretHeader`, and `PROBE_SECRET_HEADERS`)
 *   are `<redacted>`.
 * - Probe URLs keep everything but their password (or a user name standing alone), every query
 *   value (a query part without `=` whole) and the fragment, which are `****` (`maskUrl`).
 * - Target URLs, of every kind, are their scheme and host and `/…`: a receiver's path or query
 *   may be its credential as much as a Slack URL's path is (Slack and Discord URLs are shown so
 *   to every key, since only that form is kept readable).
 *
 * @module
 */
import { maskUrl, redactHeaders } from "@probe/shared";
import { maskChatUrl } from "./targets.ts";

/** Header names (lower case) masked besides the built-in ones: `PROBE_SECRET_HEADERS`. */
export type SecretHeaders = readonly string[];

/** A probe, or a row naming one by URL (overview, status): what a reader may see of it. */
export function probeForReader<T extends { url: string; headers?: Record<string, string> }>(
  probe: T,
  secretHeaders: SecretHeaders,
): T {
  return {
    ...probe,
    url: maskUrl(probe.url),
    ...(probe.headers !== undefined && { headers: redactHeaders(probe.headers, secretHeaders) }),
  };
}

/** A notification target as a reader sees it: its URL cut to scheme and host, for every kind. */
export function targetForReader<T extends { url: string | null }>(target: T): T {
  return target.url === null ? target : { ...target, url: maskChatUrl(target.url) };
}
