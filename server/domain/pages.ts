/**
 * Keyset paging for the lists that can be long. A page is read with one row more than asked,
 * which tells whether another follows; the cursor (`next_after`) is the sort key of the page's
 * last row, as base64url JSON: opaque to callers, checked when it comes back.
 *
 * A list asked for without `limit` is answered whole only up to {@link MAX_PAGE_LIMIT} items:
 * past that the caller must page. REST and single `/trpc` calls never meet this, they walk the
 * pages themselves (`server/procedures/pages.ts`); it bounds the lists a tRPC batch can ask for.
 *
 * @module
 */
import { MAX_PAGE_LIMIT } from "@probe/shared";
import { DomainError } from "./errors.ts";

export interface PageRequest {
  limit?: number;
  after?: string;
}

export interface Page<T> {
  rows: T[];
  /** The cursor of the next page; null on the last one. */
  next: string | null;
}

/** How many rows to read for `request`: one more than it may answer. */
export function rowsToRead(request: PageRequest): number {
  return (request.limit ?? MAX_PAGE_LIMIT) + 1;
}

/** The cursor of a row's sort key. */
export function encodeCursor(key: readonly string[]): string {
  const bytes = new TextEncoder().encode(JSON.stringify(key));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** The sort key of a cursor this service gave, with `arity` parts; a 422 for anything else. */
export function decodeCursor(cursor: string, arity: number): string[] {
  try {
    const binary = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
    const text = new TextDecoder("utf-8", { fatal: true })
      .decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
    const key: unknown = JSON.parse(text);
    if (
      Array.isArray(key) && key.length === arity && key.every((part) => typeof part === "string")
    ) {
      return key;
    }
  } catch {
    // Not base64url, not UTF-8 or not JSON: answered below like any other wrong cursor.
  }
  throw notACursor();
}

/** A cursor that is not one this list gave. */
export const notACursor = () =>
  new DomainError("validation_failed", "Validation failed", [
    { path: "after", message: "is not a cursor this list gave (use meta.next_after)" },
  ]);

/** A list asked for without `limit` that holds more than {@link MAX_PAGE_LIMIT} `what`. */
export const listTooLong = (what: string) =>
  new DomainError("validation_failed", "Validation failed", [{
    path: "limit",
    message: `more than ${MAX_PAGE_LIMIT} ${what} match: ask for pages with limit and after, or ` +
      "make the call alone (not in a batch) to have the whole list streamed",
  }]);

/** The page of `rows` (read with `rowsToRead`), with the cursor of the next one. */
export function pageOf<T>(
  rows: T[],
  request: PageRequest,
  keyOf: (row: T) => readonly string[],
  what: string,
): Page<T> {
  const limit = request.limit ?? MAX_PAGE_LIMIT;
  if (rows.length <= limit) return { rows, next: null };
  if (request.limit === undefined) throw listTooLong(what);
  rows.length = limit;
  return { rows, next: encodeCursor(keyOf(rows[limit - 1])) };
}
