import type { ErrorDetail } from "@probe/shared";

/** What went wrong, in the domain's words; `server/procedures/errors.ts` turns it into a status code. */
export type DomainErrorKind =
  | "not_found"
  | "conflict"
  | "validation_failed"
  | "unavailable"
  | "out_of_scope"
  | "forbidden"
  | "rate_limited";

/** An expected failure of a domain operation: the caller asked for something that cannot be. */
export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = "DomainError";
  }
}

/** Too much at once from one caller: answered 429 with `Retry-After` (`retryAfterSeconds`). */
export class TooManyRequests extends DomainError {
  constructor(message: string, readonly retryAfterSeconds: number) {
    super("rate_limited", message);
    this.name = "TooManyRequests";
  }
}

export const notFound = (what: "Project" | "Probe" | "Location") =>
  new DomainError("not_found", `${what} not found`);

export const unavailable = (what: string) =>
  new DomainError("unavailable", `${what} is not available`);

export const noFieldsProvided = () =>
  new DomainError("validation_failed", "No fields were provided");

/** PostgreSQL's SQLSTATE for a unique violation; both drivers expose it as `code`. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { code?: unknown; constraint?: unknown; constraint_name?: unknown };
  if (e.code !== "23505") return false;
  return constraint === undefined || e.constraint === constraint ||
    e.constraint_name === constraint;
}
