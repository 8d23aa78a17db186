// @ts-check
/**
 * Calls to the REST API under `/api/v1`, with the dashboard's session: an HttpOnly cookie the
 * service set at sign-in (`POST /auth/sign-in`), which no script can read; the key itself is
 * never kept in the browser. `get`, `post`, `patch` and `del` are typed by the OpenAPI document
 * (`api_types.d.ts`): a path the API lacks, a query parameter or body field its operation does
 * not take, or a field its answer lacks fails `deno check`.
 */
/** @import { Del, Get, Patch, Post, Prefetch } from "./api_types.d.ts" */

/** What the signed-in user may do: `write` (editor, admin) or `read` (viewer). */
/** @typedef {"read" | "write"} Scope */

/** @typedef {"viewer" | "editor" | "admin"} Role */

/**
 * A dashboard session, as `GET /auth/session` and sign-in tell it.
 * @typedef {{ id: string, kind: "key" | "oidc", name: string, role: Role,
 *   projects: string[] | null, expires_at: string, idle_expires_at: string }} Session
 */

/**
 * What the page knows at start: the session (or null), whether one was presented that has
 * ended, and the single sign-on provider offered (or null).
 * @typedef {{ session: Session | null, ended?: boolean,
 *   oidc: { name: string, start: string } | null }} SessionState
 */

/** @type {Set<() => void>} */
const unauthorizedListeners = new Set();

/**
 * The scope of a role: a viewer reads, the others may also change.
 * @param {Role} role
 * @returns {Scope}
 */
export const scopeOf = (role) => role === "viewer" ? "read" : "write";

/**
 * Sends a request to one of the `/auth` endpoints; answers the parsed body (null for 204).
 * @param {"GET" | "POST"} method
 * @param {string} path
 * @param {unknown} [body]
 */
async function auth(method, path, body) {
  let response;
  try {
    response = await fetch(`/auth${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch {
    throw new ApiError(0, { code: "unreachable", message: "The service could not be reached" });
  }
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: described by its status below.
  }
  if (!response.ok) {
    throw new ApiError(
      response.status,
      parsed?.error ?? { code: `http_${response.status}`, message: `HTTP ${response.status}` },
      response.headers.get("retry-after"),
    );
  }
  return parsed;
}

/**
 * The page's session, if any, and how one may sign in.
 * @returns {Promise<SessionState>}
 */
export const sessionState = async () => (await auth("GET", "/session")).data;

/**
 * Signs in with an API key: the service keeps a session and sets its cookie.
 * @param {string} key
 * @returns {Promise<Session>}
 */
export const signIn = async (key) => (await auth("POST", "/sign-in", { api_key: key })).data;

/** Ends the session (and the service clears its cookie). */
export const signOut = () => auth("POST", "/sign-out");

/** One field at fault in a refusal: its path (`headers.x-a`) and what is wrong with it. */
/** @typedef {{ path: string, message: string }} ErrorDetail */

/** An answer that was not 2xx: the API's error body (`code`, `message`, `details`). */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {{ code: string, message: string, details?: unknown }} error
   * @param {string | null} retryAfter
   */
  constructor(status, error, retryAfter = null) {
    super(error.message);
    this.status = status;
    this.code = error.code;
    /** @type {ErrorDetail[]} `[{ path, message }]`: the fields at fault. */
    this.details = Array.isArray(error.details) ? error.details : [];
    this.retryAfter = retryAfter;
  }
}

/** A 401 that came before anyone listened (to a call made while the page loaded). */
let missedUnauthorized = false;

/**
 * Calls `listener` when a call is refused with 401 (the session has ended).
 * @param {() => void} listener
 */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
  if (missedUnauthorized) {
    missedUnauthorized = false;
    queueMicrotask(listener);
  }
  return () => unauthorizedListeners.delete(listener);
}

/** @type {Map<string, Promise<any>>} */
const prefetched = new Map();

/**
 * Starts a GET now, for `getPrefetched(path)` to pick up later.
 * @type {Prefetch}
 */
export function prefetch(path) {
  const call = request("GET", path);
  call.catch(() => {}); // Whoever picks it up sees the failure.
  prefetched.set(path, call);
}

/** Drops what was prefetched (before sign-in, it was refused). */
export const forgetPrefetched = () => prefetched.clear();

/**
 * The prefetched GET of `path` (once), or a new one.
 * @type {Get}
 */
export const getPrefetched = (path, ..._checked) => {
  const call = prefetched.get(path);
  prefetched.delete(path);
  return call ?? request("GET", path);
};

/**
 * Calls the API: answers the parsed body (null for 204), throws an ApiError otherwise (status
 * 0 when the service could not be reached). Untyped, so not exported: every call goes through
 * `get`, `post`, `patch` or `del` below, which are typed.
 * @param {"GET" | "POST" | "PATCH" | "DELETE"} method
 * @param {string} path
 * @param {{ body?: unknown }} [options]
 * @returns {Promise<any>}
 */
async function request(method, path, { body } = {}) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  let response;
  try {
    response = await fetch(`/api/v1${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch {
    throw new ApiError(0, { code: "unreachable", message: "The service could not be reached" });
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON (a proxy's page): described by its status below.
  }
  if (!response.ok) {
    const error = parsed?.error ?? {
      code: `http_${response.status}`,
      message: `The service answered HTTP ${response.status}`,
    };
    if (response.status === 401) {
      if (unauthorizedListeners.size === 0) missedUnauthorized = true;
      for (const listener of unauthorizedListeners) listener();
    }
    throw new ApiError(response.status, error, response.headers.get("retry-after"));
  }
  return parsed;
}

/** @type {Get} */
export const get = (path, ..._checked) => request("GET", path);
/** @type {Post} */
export const post = (path, ...[body]) => request("POST", path, { body });
/** @type {Patch} */
export const patch = (path, ...[body]) => request("PATCH", path, { body });
/** @type {Del} */
export const del = (path, ..._checked) => request("DELETE", path);

/**
 * A path segment: a project name or a probe id as it goes into a URL.
 * @param {string} value
 */
export const seg = (value) => encodeURIComponent(value);

/**
 * `/projects/{project}/probes/{probeId}` for the API and the dashboard's own routes.
 * @param {string} project
 * @param {string} probeId
 * @returns {`/projects/${string}/probes/${string}`}
 */
export const probePath = (project, probeId) => `/projects/${seg(project)}/probes/${seg(probeId)}`;
