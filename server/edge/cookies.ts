/**
 * The cookies of sign-in (`auth.ts`, `oidc.ts`): read from a request, and written HttpOnly,
 * `SameSite=Lax`, `Path=/`, and `Secure` under a `__Host-` name where the service is served over
 * HTTPS.
 *
 * @module
 */

/** Where the service is served from: `PUBLIC_URL`, when set, decides the scheme and origin. */
export interface SessionSite {
  publicUrl?: string;
}

/** Whether `url`'s request is served over HTTPS (`PUBLIC_URL`'s scheme, or the request's). */
export function servedSecurely(site: SessionSite, url: URL): boolean {
  return (site.publicUrl ? new URL(site.publicUrl).protocol : url.protocol) === "https:";
}

/** The values of the `cookie` header by name (the first of a name wins). */
export function cookiesOf(headers: Headers): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of (headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    if (!found.has(name)) found.set(name, part.slice(at + 1).trim());
  }
  return found;
}

/** A cookie of ours, by its plain name: `__Host-<name>` where served over HTTPS. */
export function cookieName(site: SessionSite, url: URL, name: string): string {
  return servedSecurely(site, url) ? `__Host-${name}` : name;
}

/** The value of our cookie `name` in a request, or null. */
export function cookieOf(site: SessionSite, request: Request, url: URL, name: string) {
  return cookiesOf(request.headers).get(cookieName(site, url, name)) ?? null;
}

/** The `Set-Cookie` value of our cookie `name`: `value` for `maxAgeSeconds`, or cleared (null). */
export function setCookie(
  site: SessionSite,
  url: URL,
  name: string,
  value: string | null,
  maxAgeSeconds: number,
): string {
  return [
    `${cookieName(site, url, name)}=${value ?? ""}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${value === null ? 0 : maxAgeSeconds}`,
    ...(servedSecurely(site, url) ? ["Secure"] : []),
  ].join("; ");
}
