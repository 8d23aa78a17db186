/**
 * `GET /metrics`: the registry in the Prometheus text format. Served by the request handler as
 * a keyed endpoint (any key that sees every project, read-only ones included), and by the standalone runner on
 * `METRICS_PORT` (`standalone.ts`).
 *
 * @module
 */
import type { Registry } from "prom-client";
import { apiError } from "../../procedures/errors.ts";
import { errorAnswer } from "../../edge/answers.ts";
import type { KeyedEndpoint } from "../../edge/edge_types.ts";

export const METRICS_PATH = "/metrics";

/** Answers a request for the metrics: GET or HEAD, any key's scope. */
export async function answerMetrics(request: Request, registry: Registry): Promise<Response> {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return errorAnswer(apiError("method_not_allowed"), { allow: "GET, HEAD" });
  }
  const text = await registry.metrics();
  return new Response(request.method === "HEAD" ? null : text, {
    headers: { "content-type": registry.contentType, "cache-control": "no-store" },
  });
}

/**
 * `/metrics` for `HttpDeps.keyed`: every role alike, but only to a key that sees every project.
 * The series name projects and probes of all (and the service's own figures): a key limited to
 * projects is refused (403) rather than shown a filtered copy.
 */
export function metricsEndpoint(registry: Registry): KeyedEndpoint {
  return {
    path: METRICS_PATH,
    handle: (request, _url, _scope, principal) =>
      principal.projects === null
        ? answerMetrics(request, registry)
        : Promise.resolve(errorAnswer(apiError("forbidden", METRICS_SCOPED))),
  };
}

/** Why a key limited to projects gets no metrics. */
export const METRICS_SCOPED = "The metrics name every project: they need a key that sees them all";
