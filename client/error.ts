import type { ErrorDetail } from "./api_types.ts";

/**
 * Every failed call rejects with this error. `status` is the HTTP status (0 when the service could
 * not be reached), `code` the service's error code (`"not_found"`, `"conflict"`,
 * `"validation_failed"`, `"unauthorized"`, ...) and `details` the fields at fault, if any.
 *
 * @example Telling a conflict from other failures
 * ```ts ignore
 * try {
 *   await client.projects.create({ project: "shop" });
 * } catch (e) {
 *   if (!(e instanceof ProbeApiError) || e.code !== "conflict") throw e;
 * }
 * ```
 */
export class ProbeApiError extends Error {
  override name = "ProbeApiError";
  /** The HTTP status of the answer; 0 when no answer came. */
  readonly status: number;
  /** The service's error code, or `network_error` / `unexpected_response` from the client. */
  readonly code: string;
  /** The fields at fault (path and message); empty when the error is not about fields. */
  readonly details: ErrorDetail[];

  constructor(
    init: { status: number; code: string; message: string; details?: ErrorDetail[] },
    options?: ErrorOptions,
  ) {
    super(init.message, options);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? [];
  }
}

interface ServiceErrorData {
  httpStatus?: number;
  error?: { code?: unknown; message?: unknown; details?: unknown };
}

interface TransportError {
  message: string;
  cause?: unknown;
  data?: ServiceErrorData | null;
  meta?: { response?: { status?: number } };
}

function isTransportError(error: unknown): error is TransportError & Error {
  return error instanceof Error && error.name === "TRPCClientError";
}

/** Turns whatever a call rejected with into a ProbeApiError. */
export function toProbeApiError(error: unknown): ProbeApiError {
  if (error instanceof ProbeApiError) return error;
  if (!isTransportError(error)) {
    return new ProbeApiError({
      status: 0,
      code: "client_error",
      message: error instanceof Error ? error.message : String(error),
    }, { cause: error });
  }
  // Raised by the client's own fetch wrapper (no answer, or not the service's).
  if (error.cause instanceof ProbeApiError) return error.cause;
  const body = error.data?.error;
  const status = error.data?.httpStatus ?? error.meta?.response?.status ?? 0;
  if (body && typeof body.code === "string" && typeof body.message === "string") {
    return new ProbeApiError({
      status,
      code: body.code,
      message: body.message,
      details: Array.isArray(body.details) ? body.details as ErrorDetail[] : undefined,
    }, { cause: error });
  }
  return new ProbeApiError({
    status,
    code: "unexpected_response",
    message: `The probe service answered ${status} with a body it does not send: ${error.message}`,
  }, { cause: error });
}
