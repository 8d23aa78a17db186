/**
 * CORS for the origins named in CORS_ORIGINS, and for none otherwise: with no origins listed,
 * the service sends no CORS header at all and browsers keep their same-origin rule.
 */

const ALLOWED_METHODS = "GET, POST, PATCH, DELETE, OPTIONS";
const ALLOWED_HEADERS = "content-type, x-service-api-key, authorization";
const EXPOSED_HEADERS = "retry-after";
const MAX_AGE_SECONDS = "600";

export interface Cors {
  /** The answer to a preflight from an allowed origin; null for any other request. */
  preflight(request: Request): Response | null;
  /** Adds the CORS headers an answer to an allowed origin carries. */
  decorate(request: Request, headers: Headers): void;
}

/** The CORS policy for the listed origins, or null when none are listed. */
export function createCors(origins: readonly string[]): Cors | null {
  if (origins.length === 0) return null;
  const allowed = new Set(origins);
  const allowedOrigin = (request: Request) => {
    const origin = request.headers.get("origin");
    return origin !== null && allowed.has(origin) ? origin : null;
  };
  return {
    preflight(request) {
      if (request.method !== "OPTIONS") return null;
      if (!request.headers.has("access-control-request-method")) return null;
      const origin = allowedOrigin(request);
      if (!origin) return null;
      return new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-methods": ALLOWED_METHODS,
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": MAX_AGE_SECONDS,
        },
      });
    },
    decorate(request, headers) {
      // The answer depends on the Origin header, so caches must keep them apart.
      headers.append("vary", "Origin");
      const origin = allowedOrigin(request);
      if (!origin) return;
      headers.set("access-control-allow-origin", origin);
      headers.set("access-control-expose-headers", EXPOSED_HEADERS);
    },
  };
}
