/**
 * Listening failures that callers tell apart: shared by the HTTP edge's connection layer
 * (`server/edge/serve.ts`) and the processes that start a server on it (the service, the runner's
 * own `/metrics`), so that the runner need not import from the HTTP edge.
 *
 * @module
 */

/** The port is taken by another process (EADDRINUSE). */
export class PortInUseError extends Error {
  override name = "PortInUseError";
  constructor(readonly hostname: string, readonly port: number) {
    super(`port ${port} is already in use`);
  }
}
