import type { ErrorBody, ErrorDetail } from "@probe/shared";
import { TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { DomainError, type DomainErrorKind } from "./domain/errors.ts";

/**
 * The one place where failures become status codes and error bodies, for REST and tRPC alike.
 * Unknown errors become a generic 500: their message and stack go to the log, never the caller.
 */

export interface ApiError {
  status: number;
  body: ErrorBody;
}

export function apiError(
  status: number,
  code: string,
  message: string,
  details?: ErrorDetail[],
): ApiError {
  return { status, body: { error: { code, message, ...(details && { details }) } } };
}

const DOMAIN_TO_TRPC: Record<DomainErrorKind, TRPC_ERROR_CODE_KEY> = {
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  validation_failed: "UNPROCESSABLE_CONTENT",
  unavailable: "SERVICE_UNAVAILABLE",
};

const TRPC_TO_API: Partial<Record<TRPC_ERROR_CODE_KEY, [number, string, string]>> = {
  PARSE_ERROR: [400, "malformed_json", "The request body is not valid JSON"],
  BAD_REQUEST: [400, "bad_request", "Bad request"],
  UNAUTHORIZED: [401, "unauthorized", "A valid X-Service-Api-Key header is required"],
  NOT_FOUND: [404, "not_found", "No such route"],
  METHOD_NOT_SUPPORTED: [405, "method_not_allowed", "Method not allowed"],
  CONFLICT: [409, "conflict", "Conflict"],
  PAYLOAD_TOO_LARGE: [413, "payload_too_large", "The request body is larger than 1 MiB"],
  UNSUPPORTED_MEDIA_TYPE: [
    415,
    "unsupported_media_type",
    "The request body must be application/json",
  ],
  UNPROCESSABLE_CONTENT: [422, "validation_failed", "Validation failed"],
  TOO_MANY_REQUESTS: [429, "rate_limited", "Too many requests"],
  SERVICE_UNAVAILABLE: [503, "service_unavailable", "The database is not available"],
};

const INTERNAL = apiError(500, "internal", "Internal server error");

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
  code?: string;
  keys?: string[];
}

function isZodError(e: unknown): e is { issues: ZodLikeIssue[] } {
  return e instanceof Error && e.name === "ZodError" &&
    Array.isArray((e as { issues?: unknown }).issues);
}

/** Zod issues as `{ path, message }` details; each unknown key gets its own line. */
export function zodDetails(issues: ZodLikeIssue[]): ErrorDetail[] {
  return issues.flatMap((issue) => {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys" && issue.keys) {
      return issue.keys.map((key) => ({
        path: path ? `${path}.${key}` : key,
        message: "is not a known field",
      }));
    }
    return [{ path, message: issue.message }];
  });
}

/** Wraps a domain error as the tRPC error it stands for; any other error passes through. */
export function toTRPCError(error: unknown): unknown {
  // tRPC wraps what a procedure throws in an INTERNAL_SERVER_ERROR whose cause is the original.
  if (error instanceof TRPCError && error.cause instanceof DomainError) error = error.cause;
  if (error instanceof DomainError) {
    return new TRPCError({
      code: DOMAIN_TO_TRPC[error.kind],
      message: error.message,
      cause: error,
    });
  }
  if (error instanceof TRPCError && error.code === "BAD_REQUEST" && isZodError(error.cause)) {
    return new TRPCError({
      code: "UNPROCESSABLE_CONTENT",
      message: "Validation failed",
      cause: error.cause,
    });
  }
  return error;
}

/** The status and body a failure is answered with. */
export function toApiError(error: unknown): ApiError {
  const mapped = toTRPCError(error);
  if (!(mapped instanceof TRPCError)) return INTERNAL;
  const entry = TRPC_TO_API[mapped.code];
  if (!entry) return INTERNAL;
  const [status, code, fallback] = entry;
  const cause = mapped.cause;
  if (cause instanceof DomainError) {
    return apiError(status, code, cause.message, cause.details.length ? cause.details : undefined);
  }
  if (isZodError(cause)) {
    return apiError(status, code, "Validation failed", zodDetails(cause.issues));
  }
  // Other messages come from the libraries, in their words: callers get ours.
  return apiError(status, code, fallback);
}

/** Whether an error is one we did not expect, and so belongs in the log with its stack. */
export function isUnexpected(error: unknown): boolean {
  return toApiError(error).status >= 500;
}
