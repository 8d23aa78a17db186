// @ts-check
/**
 * Calls to the REST API under `/api/v1`, each with the `X-Service-Api-Key` header. The key is
 * kept in `sessionStorage` only: this tab, until sign-out or until the tab is closed. `get`,
 * `post`, `patch` and `del` are typed by the OpenAPI document (`api_types.d.ts`): a path the
 * API lacks, a query parameter or body field its operation does not take, or a field its answer
 * lacks fails `deno check`.
 */
/** @import { Del, Get, GetOptions, Patch, Post, Prefetch } from "./api_types.d.ts" */

/** What a key may do, as `/whoami` says. */
/** @typedef {"read" | "write"} Scope */

const KEY_ITEM = "probe-dashboard:api-key";
const SCOPE_ITEM = "probe-dashboard:scope";
/** @type {Set<() => void>} */
const unauthorizedListeners = new Set();

/** The key signed in with, or null. */
export function storedKey() {
  try {
    return sessionStorage.getItem(KEY_ITEM);
  } catch {
    return null;
  }
}

/**
 * What the stored key may do, as `/whoami` said at sign-in: `write` or `read` (if unknown).
 * @returns {Scope}
 */
export function storedScope() {
  try {
    return sessionStorage.getItem(SCOPE_ITEM) === "write" ? "write" : "read";
  } catch {
    return "read";
  }
}

/**
 * @param {string} key
 * @param {Scope} scope
 */
export function keepKey(key, scope) {
  sessionStorage.setItem(KEY_ITEM, key);
  sessionStorage.setItem(SCOPE_ITEM, scope);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_ITEM);
  sessionStorage.removeItem(SCOPE_ITEM);
}

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
 * Calls `listener` when a call made with the stored key is refused with 401.
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

/**
 * The prefetched GET of `path` (once), or a new one.
 * @type {Get}
 */
export const getPrefetched = (path, ...rest) => {
  const call = prefetched.get(path);
  prefetched.delete(path);
  return call ?? request("GET", path, /** @type {GetOptions | undefined} */ (rest[0]));
};

/**
 * Calls the API: answers the parsed body (null for 204), throws an ApiError otherwise (status
 * 0 when the service could not be reached). Untyped, so not exported: every call goes through
 * `get`, `post`, `patch` or `del` below, which are typed.
 * @param {"GET" | "POST" | "PATCH" | "DELETE"} method
 * @param {string} path
 * @param {{ body?: unknown, key?: string | null }} [options]
 * @returns {Promise<any>}
 */
async function request(method, path, { body, key = storedKey() } = {}) {
  /** @type {Record<string, string>} */
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

/** @type {Get} */
export const get = (path, ...[options]) =>
  request("GET", path, /** @type {GetOptions | undefined} */ (options));
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
