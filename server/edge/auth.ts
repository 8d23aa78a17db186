/**
 * Dashboard sign-in, outside `/api/v1` since its answers set cookies (docs/access.md, "Dashboard
 * sessions"):
 *
 * - `POST /auth/sign-in` `{"api_key": "…"}`: a session for the key (its role, projects and name,
 *   `key NAME`); 200 with the session's record and its cookie; 401 for a key that is none.
 * - `POST /auth/sign-out`: ends the request's session and clears the cookie; 204.
 * - `GET /auth/session`: the request's session (or null), whether the cookie presented is of a
 *   session that has ended, and how else one may sign in (OIDC).
 * - `GET /auth/oidc/start` and `/auth/oidc/callback`: single sign-on (`oidc.ts`).
 *
 * The cookie is HttpOnly, `SameSite=Lax` (sent on a top-level navigation back from the OpenID
 * provider, never on another site's requests), `Path=/`, and `Secure` with the `__Host-` name
 * where the service is served over HTTPS (`PUBLIC_URL`, or the request's scheme). A request with
 * the cookie and no key is let in by `sessionAdmission` (for `keyCheck`); a change it asks for
 * (any method but GET and HEAD) must come from the service's own origin, or it is refused 403:
 * another site cannot use a signed-in browser's session.
 *
 * @module
 */
import { type ApiError, apiError, validationFailed } from "../procedures/errors.ts";
import { parseJson, readBodyText } from "./body.ts";
import type { Principal } from "../domain/principal.ts";
import { type SessionRecord, type Sessions, sha256Hex } from "../domain/access/sessions.ts";
import { json, restError } from "./answers.ts";
import type { RateLimiter } from "./rate_limit.ts";
import type { OidcSignIn } from "./oidc.ts";
import { cookieOf, type SessionSite, setCookie } from "./cookies.ts";

export type { SessionSite };

export const AUTH_PREFIX = "/auth";
const COOKIE = "probe-session";
/** A sign-in body is a key: anything longer is not one. */
const MAX_SIGN_IN_BYTES = 4096;

/** The request's session token, from the cookie its scheme uses. */
export function sessionToken(site: SessionSite, request: Request, url: URL): string | null {
  return cookieOf(site, request, url, COOKIE);
}

/** The `Set-Cookie` of a session (`token`), or the one that clears it (null). */
export function sessionCookie(
  site: SessionSite,
  url: URL,
  token: string | null,
  maxAgeSeconds = 0,
): string {
  return setCookie(site, url, COOKIE, token, maxAgeSeconds);
}

/**
 * Whether a request comes from the service's own pages: `Sec-Fetch-Site: same-origin` when the
 * browser sends it, else an `Origin` equal to the service's (`PUBLIC_URL`'s, or the request's).
 */
export function fromOwnOrigin(site: SessionSite, request: Request, url: URL): boolean {
  const fetchSite = request.headers.get("sec-fetch-site");
  if (fetchSite !== null) return fetchSite === "same-origin";
  const origin = request.headers.get("origin");
  if (origin === null) return false;
  return origin === url.origin || (!!site.publicUrl && origin === new URL(site.publicUrl).origin);
}

const CROSS_SITE = "A session's changes must come from the dashboard's own origin";

/** What the key check makes of a request's session cookie. */
export type SessionAdmission = { principal: Principal } | { refused: ApiError } | null;

/**
 * The session a request without a key presents (for `keyCheck`): its principal; a refusal
 * (403) for a change asked from another origin; null without a session that is still valid.
 */
export function sessionAdmission(sessions: Sessions, site: SessionSite) {
  return async (request: Request, url: URL): Promise<SessionAdmission> => {
    const token = sessionToken(site, request, url);
    if (token === null) return null;
    const principal = await sessions.check(token);
    if (!principal) return null;
    const reads = request.method === "GET" || request.method === "HEAD";
    if (!reads && !fromOwnOrigin(site, request, url)) {
      return { refused: apiError("forbidden", CROSS_SITE) };
    }
    return { principal };
  };
}

/** A session as sign-in and `GET /auth/session` tell it. */
function shown(record: SessionRecord) {
  const { id, kind, name, role, projects, created_at, expires_at, idle_expires_at } = record;
  return { id, kind, name, role, projects, created_at, expires_at, idle_expires_at };
}

/** Reads a sign-in's body: the key, or why it is refused (400, 413, 422). */
async function keyOf(request: Request): Promise<string | ApiError> {
  const text = await readBodyText(request, MAX_SIGN_IN_BYTES);
  if (!text.ok) return text.error;
  const body = parseJson(text.value);
  if (!body.ok) return body.error;
  const key = (body.value as { api_key?: unknown } | null)?.api_key;
  if (typeof key !== "string" || key === "") {
    return validationFailed("api_key", "must be the API key, a non-empty string");
  }
  return key;
}

export interface AuthDeps {
  sessions: Sessions;
  site: SessionSite;
  /** Failed sign-ins per client address (as failed key checks); none when null. */
  authFailureLimiter?: RateLimiter | null;
  /** Single sign-on; absent without `OIDC_ISSUER`. */
  oidc?: OidcSignIn | null;
}

/** The `/auth/*` endpoints; null for a path that is none of them. */
export function createAuthEndpoints({ sessions, site, authFailureLimiter, oidc }: AuthDeps) {
  const signedIn = (url: URL, token: string, record: SessionRecord, status = 200) => {
    const response = json(status, { data: shown(record) });
    response.headers.set(
      "set-cookie",
      sessionCookie(site, url, token, Math.floor(sessions.lifetimes.absoluteMs / 1000)),
    );
    return response;
  };
  return async (request: Request, url: URL, address: string): Promise<Response | null> => {
    const path = url.pathname.slice(AUTH_PREFIX.length);
    const method = request.method;
    if (path === "/session" && (method === "GET" || method === "HEAD")) {
      const token = sessionToken(site, request, url);
      const principal = token === null ? null : await sessions.check(token);
      const record = principal?.sessionId ? await sessions.get(principal.sessionId) : null;
      return json(200, {
        data: {
          session: record && principal
            ? {
              ...shown(record),
              name: principal.name,
              role: principal.role,
              projects: principal.projects,
            }
            : null,
          // A cookie whose session has ended: the dashboard says so rather than just asking.
          ended: token !== null && !principal,
          oidc: oidc ? { name: oidc.name, start: `${AUTH_PREFIX}/oidc/start` } : null,
        },
      });
    }
    if (path === "/sign-in" && method === "POST") {
      // Signing in from another site would sign a victim's browser in to the attacker's key.
      if (!fromOwnOrigin(site, request, url)) return restError(apiError("forbidden", CROSS_SITE));
      const key = await keyOf(request);
      if (typeof key !== "string") return restError(key);
      const made = await sessions.create({ kind: "key", keySha256: sha256Hex(key) }, {
        userAgent: request.headers.get("user-agent"),
      });
      if (!made) {
        const failures = authFailureLimiter?.take(address);
        if (failures && !failures.ok) {
          const refused = restError(apiError("rate_limited"));
          refused.headers.set("retry-after", String(failures.retryAfterSeconds));
          return refused;
        }
        return restError(apiError("unauthorized"));
      }
      return signedIn(url, made.token, made.record);
    }
    if (path === "/sign-out" && method === "POST") {
      if (!fromOwnOrigin(site, request, url)) return restError(apiError("forbidden", CROSS_SITE));
      const token = sessionToken(site, request, url);
      if (token !== null) await sessions.endToken(token);
      const response = new Response(null, { status: 204 });
      response.headers.set("set-cookie", sessionCookie(site, url, null));
      return response;
    }
    if (oidc && path.startsWith("/oidc/") && method === "GET") {
      return await oidc.handle(request, url, path.slice("/oidc".length), {
        signIn: async (owner, redirect) => {
          const made = await sessions.create(owner, {
            userAgent: request.headers.get("user-agent"),
          });
          if (!made) return restError(apiError("unauthorized"));
          const response = signedIn(url, made.token, made.record, 303);
          response.headers.set("location", redirect);
          return response;
        },
      });
    }
    return null;
  };
}
