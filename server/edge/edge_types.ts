/**
 * The kinds of part the edge (`router.ts`) mounts, for the modules that provide them.
 *
 * @module
 */
import type { Scope } from "../domain/access/api_key.ts";
import type { Principal } from "../domain/principal.ts";

/** A part of the service that answers some requests without a key; null for the others. */
export type PublicPage = (request: Request, url: URL) => Promise<Response | null>;

/** An endpoint of its own path that needs a key, such as `/metrics` and `/backup`. */
export interface KeyedEndpoint {
  /** The exact path it answers, such as `/metrics`. */
  path: string;
  /**
   * Answers a request that passed the key check; refuses what `scope` (or the caller's role)
   * may not do itself.
   */
  handle(request: Request, url: URL, scope: Scope, principal: Principal): Promise<Response>;
}

/**
 * What the edge tells of each request (`HttpDeps.metrics`); `server/operations/metrics/http.ts` counts it
 * for `/metrics`.
 */
export interface HttpMetrics {
  /** One request answered: its route (a template or a fixed label), method, status, duration. */
  request(route: string, method: string, status: number, seconds: number): void;
  /**
   * A request refused by a rate limit: the key's (`key`) or failed key checks' (`auth_failures`).
   */
  refused(limit: "key" | "auth_failures"): void;
}
