/**
 * The service's error contract, in one place: every error code with its HTTP status, its tRPC
 * code and the message callers see; how a failure becomes one of them; and the three wire
 * shapes built from it — the REST body, the tRPC error shape (which carries the REST body under
 * `data.error`) and the OpenAPI response that documents it. Unknown errors become a generic 500:
 * their message and stack go to the log, never to the caller.
 *
 * @module
 */
import type { ErrorBody, ErrorDetail } from "@probe/shared";
import { TRPCError } from "@trpc/server";
import { type TRPC_ERROR_CODE_KEY, TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { isInvalidText } from "../storage/invalid_text.ts";
import {
  DEADLINE_MESSAGE,
  isDatabaseUnavailable,
  unavailableMessage,
} from "../storage/unavailable.ts";
import { DomainError, type DomainErrorKind, TooManyRequests } from "../domain/errors.ts";

/**
 * Thrown where an answer would pass the limit (`server/procedures/answer_size.ts`); answered 413
 * `response_too_large`.
 */
export class AnswerTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The answer would be larger than ${maxBytes} characters`);
    this.name = "AnswerTooLargeError";
  }
}

interface ErrorKind {
  status: number;
  /** The tRPC error code of the same failure on `/trpc`. */
  trpc: TRPC_ERROR_CODE_KEY;
  /** The message when nothing more specific is known. */
  message: string;
}

/** Every error the service answers with, by the code its body carries. */
export const ERRORS = {
  malformed_json: {
    status: 400,
    trpc: "PARSE_ERROR",
    message: "The request body is not valid JSON",
  },
  bad_request: { status: 400, trpc: "BAD_REQUEST", message: "Bad request" },
  unauthorized: {
    status: 401,
    trpc: "UNAUTHORIZED",
    message: "A valid X-Service-Api-Key header is required",
  },
  forbidden: { status: 403, trpc: "FORBIDDEN", message: "This key may only read" },
  // A location token outside the runner protocol, or a key inside it (docs/locations.md).
  out_of_scope: {
    status: 403,
    trpc: "FORBIDDEN",
    message: "Out of this key's scope: a location token may only claim its location's runs " +
      "and post their results, and only a location token may",
  },
  not_found: { status: 404, trpc: "NOT_FOUND", message: "No such route" },
  // On /trpc (a query sent by POST, a mutation by GET; REST answers 404 for those) and on the
  // keyed endpoints of their own (`/metrics`, `/backup`) for a method they do not take.
  method_not_allowed: {
    status: 405,
    trpc: "METHOD_NOT_SUPPORTED",
    message: "Method not allowed",
  },
  conflict: { status: 409, trpc: "CONFLICT", message: "Conflict" },
  payload_too_large: {
    status: 413,
    trpc: "PAYLOAD_TOO_LARGE",
    message: "The request body is larger than 1 MiB",
  },
  // An answer (or a tRPC batch) that would pass MAX_ANSWER_BYTES (`server/procedures/answer_size.ts`).
  response_too_large: {
    status: 413,
    trpc: "PAYLOAD_TOO_LARGE",
    message: "The answer would be larger than the service answers (MAX_ANSWER_BYTES): ask for " +
      "pages with limit and after, or send fewer calls in a batch",
  },
  unsupported_media_type: {
    status: 415,
    trpc: "UNSUPPORTED_MEDIA_TYPE",
    message: "The request body must be application/json",
  },
  validation_failed: { status: 422, trpc: "UNPROCESSABLE_CONTENT", message: "Validation failed" },
  rate_limited: { status: 429, trpc: "TOO_MANY_REQUESTS", message: "Too many requests" },
  internal: { status: 500, trpc: "INTERNAL_SERVER_ERROR", message: "Internal server error" },
  service_unavailable: {
    status: 503,
    trpc: "SERVICE_UNAVAILABLE",
    message: "The database is not available",
  },
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERRORS;

export const BODY_EMPTY = "The request body is empty";
export const BODY_NOT_UTF8 = "The request body is not valid UTF-8";
export const BODY_INCOMPLETE = "The request body was not received in full";

/** The other messages a code is answered with, where the server can say more. */
const MORE_MESSAGES: Partial<Record<ErrorCode, readonly string[]>> = {
  malformed_json: [BODY_EMPTY, BODY_NOT_UTF8],
  bad_request: [BODY_INCOMPLETE],
  service_unavailable: [DEADLINE_MESSAGE],
};

/** A failure as it is answered: its status and its body. */
export interface ApiError {
  status: number;
  body: ErrorBody & { error: { code: ErrorCode } };
  /** When to come back, for a 429 the `Retry-After` header says (`retryAfterOf`). */
  retryAfterSeconds?: number;
}

/** The answer for an error code, with the code's own message unless another is given. */
export function apiError(code: ErrorCode, message?: string, details?: ErrorDetail[]): ApiError {
  return {
    status: ERRORS[code].status,
    body: {
      error: { code, message: message ?? ERRORS[code].message, ...(details && { details }) },
    },
  };
}

/** A 422 for one field (or the whole body, path ""), in the shape zod's failures take. */
export function validationFailed(path: string, message: string): ApiError {
  return apiError("validation_failed", undefined, [{ path, message }]);
}

const BY_DOMAIN_KIND: Record<DomainErrorKind, ErrorCode> = {
  not_found: "not_found",
  conflict: "conflict",
  validation_failed: "validation_failed",
  unavailable: "service_unavailable",
  out_of_scope: "out_of_scope",
  forbidden: "forbidden",
  rate_limited: "rate_limited",
};

// 400 answers two codes; a library's BAD_REQUEST is `bad_request`, its PARSE_ERROR the JSON one.
// Two codes share PAYLOAD_TOO_LARGE: a library's is about the request (the first listed).
const BY_TRPC_CODE = new Map<TRPC_ERROR_CODE_KEY, ErrorCode>(
  (Object.entries(ERRORS) as [ErrorCode, ErrorKind][]).reverse().map((
    [code, kind],
  ) => [kind.trpc, code]),
);

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

/** Longest path segment (a key the caller sent) repeated in an error's details. */
const MAX_PATH_SEGMENT = 64;

/** A segment as the details name it: a key of 200,000 characters is not sent back in full. */
const pathSegment = (segment: PropertyKey) => {
  const text = String(segment);
  return text.length > MAX_PATH_SEGMENT ? `${text.slice(0, MAX_PATH_SEGMENT)}…` : text;
};

/** A detail's `path` from its segments (`headers.X-A`, `expect.json.0`), long keys cut short. */
export function detailPath(segments: readonly PropertyKey[]): string {
  return segments.map(pathSegment).join(".");
}

/** Zod issues as `{ path, message }` details; each unknown key gets its own line. */
function zodDetails(issues: ZodLikeIssue[]): ErrorDetail[] {
  return issues.flatMap((issue) => {
    const path = detailPath(issue.path);
    if (issue.code === "unrecognized_keys" && issue.keys) {
      return issue.keys.map((key) => ({
        path: path ? `${path}.${pathSegment(key)}` : pathSegment(key),
        message: "is not a known field",
      }));
    }
    return [{ path, message: issue.message }];
  });
}

/** The status and body a failure is answered with, on either transport. */
export function toApiError(error: unknown): ApiError {
  // tRPC wraps what a procedure throws in an INTERNAL_SERVER_ERROR whose cause is the original.
  const cause = error instanceof TRPCError && error.code === "INTERNAL_SERVER_ERROR"
    ? error.cause ?? error
    : error;
  if (cause instanceof TooManyRequests) {
    return {
      ...apiError("rate_limited", cause.message),
      retryAfterSeconds: cause.retryAfterSeconds,
    };
  }
  if (cause instanceof DomainError) {
    return apiError(
      BY_DOMAIN_KIND[cause.kind],
      cause.message,
      cause.details.length ? cause.details : undefined,
    );
  }
  if (cause instanceof AnswerTooLargeError) {
    return apiError("response_too_large");
  }
  if (isInvalidText(cause)) {
    // Names and filters are plain strings in the schemas; PostgreSQL has the last word on NUL.
    return validationFailed("", "text must not contain NUL characters");
  }
  if (isDatabaseUnavailable(cause)) {
    return apiError("service_unavailable", unavailableMessage(cause));
  }
  if (error instanceof TRPCError) {
    // Input validation fails as BAD_REQUEST with the zod error as its cause (output validation
    // fails as INTERNAL_SERVER_ERROR: that one is ours).
    if (error.code === "BAD_REQUEST" && isZodError(error.cause)) {
      return apiError("validation_failed", undefined, zodDetails(error.cause.issues));
    }
    // Other messages come from the libraries, in their words: callers get ours.
    return apiError(BY_TRPC_CODE.get(error.code) ?? "internal");
  }
  return apiError("internal");
}

/** The headers an error answer carries besides the body's: `Retry-After` for a 429 that says. */
export function retryAfterOf(error: ApiError): Record<string, string> {
  return retryAfterOfAll([error]);
}

/** The same for the errors of one answer (a tRPC batch's calls): the longest wait any says. */
export function retryAfterOfAll(errors: ApiError[]): Record<string, string> {
  const seconds = errors.flatMap((e) => e.retryAfterSeconds ?? []);
  return seconds.length === 0 ? {} : { "retry-after": String(Math.max(...seconds)) };
}

/** Whether a failure is one we did not expect, and so belongs in the log with its stack. */
export function isUnexpected(error: ApiError): boolean {
  return error.status >= 500 && error.status !== 503;
}

/**
 * The tRPC error shape of a failure: tRPC's numeric code and key, the HTTP status, and the REST
 * body under `data.error`, so that both transports say the same thing.
 */
export function trpcErrorShape({ status, body }: ApiError) {
  const key = ERRORS[body.error.code].trpc;
  return {
    message: body.error.message,
    code: TRPC_ERROR_CODES_BY_KEY[key],
    data: { code: key, httpStatus: status, error: body.error },
  };
}

/** The messages a code is answered with when the operation says nothing more specific. */
export function defaultMessages(code: ErrorCode): string[] {
  return [ERRORS[code].message, ...MORE_MESSAGES[code] ?? []];
}

/** An error as documented: its code and one message the server answers it with. */
export interface ErrorExample {
  code: ErrorCode;
  message: string;
}

/** The OpenAPI response object documenting one status, with the answers the server gives. */
export function openApiErrorResponse(examples: ErrorExample[]) {
  const body = ({ code, message }: ErrorExample) => ({ error: { code, message } });
  return {
    description: examples.map((e) => e.message).join(" / "),
    content: {
      "application/json": {
        schema: { $ref: "#/components/schemas/Error" },
        ...(examples.length === 1 ? { example: body(examples[0]) } : {
          examples: Object.fromEntries(
            examples.map((e, i) => [`${e.code}_${i + 1}`, { value: body(e) }]),
          ),
        }),
      },
    },
  };
}

/**
 * What an operation's shape lets a caller get wrong, besides what the operation declares. Every
 * operation but a read (GET) refuses read-only keys.
 */
export function errorsOf(
  operation: { takesInput: boolean; readsBody: boolean; writes: boolean },
): ErrorCode[] {
  return [
    ...(operation.readsBody
      ? ["malformed_json", "bad_request", "payload_too_large", "unsupported_media_type"] as const
      : []),
    "unauthorized",
    ...(operation.writes ? ["forbidden"] as const : []),
    "out_of_scope",
    ...(operation.takesInput ? ["validation_failed"] as const : []),
    // Reads only: a write's answer is bounded by its input, and is never refused once done.
    ...(operation.writes ? [] : ["response_too_large"] as const),
    "rate_limited",
    "internal",
    "service_unavailable",
  ];
}

/** The code that stands for an HTTP status an operation declares (404, 409, 503…). */
export function codeOfStatus(status: number): ErrorCode {
  const found = (Object.entries(ERRORS) as [ErrorCode, ErrorKind][]).find(([, kind]) =>
    kind.status === status
  );
  if (!found) throw new Error(`No error code answers with status ${status}`);
  return found[0];
}
