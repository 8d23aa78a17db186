/**
 * The methods that read: GET, and HEAD, which every route that answers GET answers too (RFC 9110,
 * 9.3.2) with its GET's status and headers and no body. The router hands a HEAD to the GET route
 * and drops the body it answers; `headLength` (`middleware.ts`) keeps that body's length.
 *
 * @module
 */

/** Whether `method` reads: GET or HEAD. */
export function isRead(method: string): boolean {
  return method === "GET" || method === "HEAD";
}
