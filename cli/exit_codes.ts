import { ProbeApiError } from "@probe/client";

/** What the CLI's exit status says about what failed. */
export const EXIT = {
  ok: 0,
  /** Anything not listed below: a bug, or an answer the CLI did not expect. */
  failure: 1,
  /** Bad arguments or options, or an unusable import file. */
  usage: 2,
  /** No API key, the service refused it (401), or the key may only read (403). */
  unauthorized: 3,
  /** The project, probe, incident, target or window does not exist (404). */
  notFound: 4,
  /**
   * The service refused the change as it stands (409): the name is taken, the target is in use,
   * the incident is resolved, a manual run is in flight.
   */
  conflict: 5,
  /** The service refused the values sent (422, or 400/413/415 for the body). */
  invalid: 6,
  /** The service could not be reached, or what answered was not the service. */
  unreachable: 7,
  /** The service failed (5xx). */
  serviceError: 8,
} as const;

/** The exit status for an error a command failed with. */
export function exitCodeFor(error: unknown): number {
  if (!(error instanceof ProbeApiError)) return EXIT.failure;
  if (error.code === "network_error" || error.code === "unexpected_response") {
    return EXIT.unreachable;
  }
  switch (error.status) {
    case 401:
    case 403:
      return EXIT.unauthorized;
    case 404:
      return EXIT.notFound;
    case 409:
      return EXIT.conflict;
    case 400:
    case 413:
    case 415:
    case 422:
      return EXIT.invalid;
  }
  return error.status >= 500 ? EXIT.serviceError : EXIT.failure;
}

/** The text `--help` shows about exit statuses. */
export const EXIT_HELP = `Exit status:
  0  success
  1  unexpected failure
  2  bad arguments, options or import file
  3  no API key, the key was refused (401), or it may only read (403)
  4  project or probe not found (404), or incident, target or maintenance window
  5  conflict (409): name taken, target in use, incident resolved, run in flight
  6  values refused by the service (422, 400)
  7  service unreachable, or the answer was not the service's
  8  the service failed (5xx)`;
