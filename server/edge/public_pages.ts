/**
 * What the public pages (status pages, badges: `status_page.ts`, `badges.ts`) share: their
 * cache headers and the process's cache of what they read, their answers and their one error
 * answer (built by `answers.ts`, as every error answer of the edge), and the percentage format.
 *
 * @module
 */
import { isDatabaseUnavailable } from "../storage/unavailable.ts";
import { toApiError } from "../procedures/errors.ts";
import { restError } from "./answers.ts";

/** How long browsers and proxies may keep a status page or a badge. */
export const PUBLIC_CACHE_CONTROL = "public, max-age=30";
/** How long this process keeps a page (or a badge's figure) before reading it again. */
export const PUBLIC_CACHE_MS = 15_000;

/** A share (0 to 1) as a percentage, cut (not rounded) to two decimals: 99.999% is not 100%. */
export function percent(share: number): string {
  if (share >= 1) return "100%";
  return `${(Math.floor(share * 10_000) / 100).toFixed(2)}%`;
}

/** An answer of a public page: its own cache headers, so the handler leaves them as they are. */
export function publicAnswer(
  request: Request,
  body: string,
  headers: Record<string, string>,
): Response {
  return new Response(request.method === "HEAD" ? null : body, {
    headers: {
      ...headers,
      "x-content-type-options": "nosniff",
      "cache-control": PUBLIC_CACHE_CONTROL,
    },
  });
}

/**
 * An error of a public page (the database is down): the error contract's answer, never kept by
 * a cache. Anything else goes on to the handler, which logs it and answers 500.
 */
export function publicFailure(error: unknown): Response {
  if (!isDatabaseUnavailable(error)) throw error;
  return restError(toApiError(error));
}
