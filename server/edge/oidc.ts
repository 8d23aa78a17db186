/**
 * Single sign-on with OpenID Connect (docs/access.md, "Single sign-on (OIDC)"), by the
 * authorization code flow with PKCE through `oauth4webapi`:
 *
 * - `GET /auth/oidc/start` sends the browser to the provider with a new state, nonce and PKCE
 *   challenge; the three are kept in a short-lived HttpOnly cookie of this browser's (any
 *   instance can finish the sign-in);
 * - `GET /auth/oidc/callback` checks the state, redeems the code with the verifier, checks the ID
 *   token (issuer, audience, nonce, expiry, and its signature against the issuer's JWKS), maps its
 *   claims to a role and projects (`rolesOfClaims`), and signs the user in: a session, then back to
 *   the dashboard. A refusal is a short page saying why, with a way back.
 *
 * @module
 */
import * as oauth from "oauth4webapi";
import type { OidcConfig } from "../base/config.ts";
import type { Role } from "../domain/principal.ts";
import type { SessionOwner } from "../domain/access/sessions.ts";
import { cookieOf, type SessionSite, setCookie } from "./cookies.ts";

const FLOW_COOKIE = "probe-oidc";
/** How long a sign-in may take at the provider. */
const FLOW_SECONDS = 600;

/** What a user's claims give them, or why they may not sign in. */
export type ClaimsVerdict =
  | { name: string; role: Role; projects: string[] | null }
  | { refused: string };

/** A claim as a list of strings: a list's strings, or a string split at commas and spaces. */
function listClaim(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  if (typeof value === "string") return value.split(/[\s,]+/).filter((v) => v !== "");
  return [];
}

/**
 * The role and projects a user's ID token claims map to: the highest role whose groups
 * (`OIDC_ADMIN_GROUPS`, `OIDC_EDITOR_GROUPS`, `OIDC_VIEWER_GROUPS`) the role claim holds, else
 * `OIDC_DEFAULT_ROLE` (or a refusal); the projects the projects claim lists when one is set
 * (none when the token lacks it); email domains checked when `OIDC_ALLOWED_DOMAINS` is set (a
 * verified email of one of them). The name is the email, or else the subject.
 */
export function rolesOfClaims(config: OidcConfig, claims: Record<string, unknown>): ClaimsVerdict {
  const email = typeof claims.email === "string" ? claims.email : null;
  const name = email ?? String(claims.sub);
  if (config.allowedDomains.length > 0) {
    const domain = email?.slice(email.lastIndexOf("@") + 1).toLowerCase();
    if (!domain || claims.email_verified === false || !config.allowedDomains.includes(domain)) {
      return { refused: "Your account's email domain may not sign in here" };
    }
  }
  const groups = new Set(listClaim(claims[config.roleClaim]));
  const holds = (list: string[]) => list.some((g) => groups.has(g));
  const role: Role | null = holds(config.adminGroups)
    ? "admin"
    : holds(config.editorGroups)
    ? "editor"
    : holds(config.viewerGroups)
    ? "viewer"
    : config.defaultRole;
  if (role === null) return { refused: "Your account has no role here: ask an admin for one" };
  const projects = config.projectsClaim ? listClaim(claims[config.projectsClaim]) : null;
  return { name, role, projects };
}

/** What the callback does with a user it accepts: a session, and a redirect to `redirect`. */
export interface SignInHooks {
  signIn(owner: SessionOwner, redirect: string): Promise<Response>;
}

export interface OidcSignIn {
  /** What the sign-in button says: "Sign in with NAME". */
  name: string;
  /** `/start` and `/callback` (the path below `/auth/oidc`); null for another path. */
  handle(request: Request, url: URL, path: string, hooks: SignInHooks): Promise<Response | null>;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A refused sign-in, for a person: why, and the way back. */
function refusedPage(status: number, why: string): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in refused</title>
</head><body><main><h1>Sign-in refused</h1><p id="reason">${escapeHtml(why)}</p>
<p><a href="/">Back to the dashboard</a></p></main></body></html>`;
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": "default-src 'none'",
      "cache-control": "no-store",
    },
  });
}

/**
 * Single sign-on with the provider `config` names. The provider's metadata is fetched on first
 * use (and again after a failure). An `http://` issuer is allowed (a provider on this machine,
 * as the tests run one); use `https://` anywhere else.
 */
export function createOidcSignIn(
  config: OidcConfig,
  site: SessionSite,
  { log }: { log?: (message: string, fields: Record<string, unknown>) => void } = {},
): OidcSignIn {
  const issuer = new URL(config.issuer);
  const insecure = issuer.protocol === "http:";
  const options = { [oauth.allowInsecureRequests]: insecure };
  const client: oauth.Client = { client_id: config.clientId };
  const clientAuth = oauth.ClientSecretBasic(config.clientSecret);
  let metadata: Promise<oauth.AuthorizationServer> | null = null;
  const server = () => {
    metadata ??= oauth.discoveryRequest(issuer, { algorithm: "oidc", ...options })
      .then((response) => oauth.processDiscoveryResponse(issuer, response));
    metadata.catch(() => metadata = null);
    return metadata;
  };
  const flowCookie = (url: URL, value: string | null) =>
    setCookie(site, url, FLOW_COOKIE, value, FLOW_SECONDS);
  const base = (url: URL) => site.publicUrl ?? url.origin;
  const redirectUri = (url: URL) => `${base(url)}/auth/oidc/callback`;

  /** The provider's metadata, or the page saying it could not be reached (logged). */
  const reach = async (): Promise<oauth.AuthorizationServer | Response> => {
    try {
      return await server();
    } catch (error) {
      log?.("the OpenID provider could not be reached", {
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      return refusedPage(503, "The sign-in provider could not be reached: try again later");
    }
  };

  const start = async (url: URL) => {
    const as = await reach();
    if (as instanceof Response) return as;
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const target = new URL(as.authorization_endpoint!);
    target.searchParams.set("client_id", config.clientId);
    target.searchParams.set("redirect_uri", redirectUri(url));
    target.searchParams.set("response_type", "code");
    target.searchParams.set("scope", config.scopes);
    target.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
    target.searchParams.set("code_challenge_method", "S256");
    target.searchParams.set("state", state);
    target.searchParams.set("nonce", nonce);
    const flow = btoa(JSON.stringify({ verifier, state, nonce }));
    return new Response(null, {
      status: 302,
      headers: {
        location: target.href,
        "set-cookie": flowCookie(url, flow),
        "cache-control": "no-store",
      },
    });
  };

  const callback = async (request: Request, url: URL, hooks: SignInHooks) => {
    const kept = cookieOf(site, request, url, FLOW_COOKIE);
    let flow: { verifier: string; state: string; nonce: string };
    try {
      flow = JSON.parse(atob(kept ?? ""));
    } catch {
      return refusedPage(400, "This sign-in expired or was started elsewhere: start it again");
    }
    const as = await reach();
    if (as instanceof Response) return as;
    let claims: Record<string, unknown>;
    try {
      const params = oauth.validateAuthResponse(as, client, url, flow.state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth,
        params,
        redirectUri(url),
        flow.verifier,
        options,
      );
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: flow.nonce,
        requireIdToken: true,
      });
      await oauth.validateApplicationLevelSignature(as, response, options);
      claims = { ...oauth.getValidatedIdTokenClaims(tokens) };
    } catch (error) {
      // The provider's own refusal (access_denied) or a check that failed: the reason is logged,
      // the person is told only that it failed.
      log?.("single sign-on failed", {
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      return refusedPage(403, "The sign-in could not be completed: start it again");
    }
    const verdict = rolesOfClaims(config, claims);
    if ("refused" in verdict) return refusedPage(403, verdict.refused);
    const answer = await hooks.signIn({ kind: "oidc", ...verdict }, "/");
    answer.headers.append("set-cookie", flowCookie(url, null));
    return answer;
  };

  return {
    name: config.name,
    handle(request, url, path, hooks) {
      if (path === "/start") return start(url);
      if (path === "/callback") return callback(request, url, hooks);
      return Promise.resolve(null);
    },
  };
}
