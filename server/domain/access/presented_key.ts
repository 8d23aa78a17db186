/**
 * How a request presents its API key, on every endpoint alike. Apart from the request handler so
 * that the standalone runner's `/metrics` (`server/operations/metrics/standalone.ts`) reads keys the same
 * way without loading the API.
 *
 * @module
 */

export const API_KEY_HEADER = "x-service-api-key";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The key a request presents: `X-Service-Api-Key`, or else `Authorization: Bearer <key>` (what
 * Prometheus's `authorization` setting sends), accepted alike on every endpoint.
 */
export function presentedKey(headers: Headers): string | null {
  const key = headers.get(API_KEY_HEADER);
  if (key !== null) return key;
  return BEARER.exec(headers.get("authorization") ?? "")?.[1] ?? null;
}
