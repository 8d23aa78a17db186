/**
 * Calls to the REST API under `/api/v1`, each with the `X-Service-Api-Key` header. The key is
 * kept in `sessionStorage` only: this tab, until sign-out or until the tab is closed.
 */

const KEY_ITEM = "probe-dashboard:api-key";
const SCOPE_ITEM = "probe-dashboard:scope";
const unauthorizedListeners = new Set();

/** The key signed in with, or null. */
export function storedKey() {
  try {
    return sessionStorage.getItem(KEY_ITEM);
  } catch {
    return null;
  }
}

/** What the stored key may do, as `/whoami` said at sign-in: `write` or `read` (if unknown). */
export function storedScope() {
  try {
    return sessionStorage.getItem(SCOPE_ITEM) === "write" ? "write" : "read";
  } catch {
    return "read";
  }
}

export function keepKey(key, scope) {
  sessionStorage.setItem(KEY_ITEM, key);
  sessionStorage.setItem(SCOPE_ITEM, scope);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_ITEM);
  sessionStorage.removeItem(SCOPE_ITEM);
}

/** An answer that was not 2xx: the API's error body (`code`, `message`, `details`). */
export class ApiError extends Error {
  constructor(status, error, retryAfter = null) {
    super(error.message);
    this.status = status;
    this.code = error.code;
    /** `[{ path, message }]`: the fields at fault. */
    this.details = Array.isArray(error.details) ? error.details : [];
    this.retryAfter = retryAfter;
  }
}

/** A 401 that came before anyone listened (to a call made while the page loaded). */
let missedUnauthorized = false;

/** Calls `listener` when a call made with the stored key is refused with 401. */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
  if (missedUnauthorized) {
    missedUnauthorized = false;
    queueMicrotask(listener);
  }
  return () => unauthorizedListeners.delete(listener);
}

const prefetched = new Map();

/** Starts a GET now, for `getPrefetched(path)` to pick up later. */
export function prefetch(path) {
  const call = get(path);
  call.catch(() => {}); // Whoever picks it up sees the failure.
  prefetched.set(path, call);
}

/** The prefetched GET of `path` (once), or a new one. */
export function getPrefetched(path) {
  const call = prefetched.get(path);
  prefetched.delete(path);
  return call ?? get(path);
}

/**
 * Calls the API: answers the parsed body (null for 204), throws an ApiError otherwise (status
 * 0 when the service could not be reached).
 */
export async function request(method, path, { body, key = storedKey() } = {}) {
  const headers = { "x-service-api-key": key ?? "" };
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
    if (response.status === 401 && key === storedKey()) {
      if (unauthorizedListeners.size === 0) missedUnauthorized = true;
      for (const listener of unauthorizedListeners) listener();
    }
    throw new ApiError(response.status, error, response.headers.get("retry-after"));
  }
  return parsed;
}

export const get = (path, options) => request("GET", path, options);
export const post = (path, body) => request("POST", path, { body });
export const patch = (path, body) => request("PATCH", path, { body });
export const del = (path) => request("DELETE", path);

/** A path segment: a project name or a probe id as it goes into a URL. */
export const seg = (value) => encodeURIComponent(value);

/** `/projects/{project}/probes/{probeId}` for the API and the dashboard's own routes. */
export const probePath = (project, probeId) => `/projects/${seg(project)}/probes/${seg(probeId)}`;
