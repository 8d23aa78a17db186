/**
 * `GET /metrics`: the registry in the Prometheus text format. Served by the request handler as
 * a keyed endpoint (any key, read-only ones included), and by the standalone runner on
 * `METRICS_PORT` (`standalone.ts`).
 *
 * @module
 */
import type { Registry } from "prom-client";
import { apiError } from "../errors.ts";
import { errorAnswer } from "../http/answers.ts";
import type { KeyedEndpoint } from "../http/edge_types.ts";

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

/** `/metrics` for `HttpDeps.keyed`: read-only and write keys alike. */
export function metricsEndpoint(registry: Registry): KeyedEndpoint {
  return {
    path: METRICS_PATH,
    handle: (request) => answerMetrics(request, registry),
  };
}
