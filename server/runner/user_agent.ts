import { SERVICE_VERSION } from "../base/version.ts";

/**
 * The `User-Agent` of every probe request, from any runner (built-in or remote): the service,
 * its version and the location, so that a target can tell where a check came from. A probe's own
 * `User-Agent` header, when it has one, is sent instead.
 */
export const probeUserAgent = (location: string) =>
  `probe-service/${SERVICE_VERSION} (location=${location})`;
