/**
 * HTTP metrics: requests by route template, method and status, their durations, rate-limit
 * refusals, and the connection layer's figures (`server/edge/serve.ts`).
 *
 * Labels are bounded: a route is a template (`/api/v1/projects/{project}`), a known procedure
 * (`/trpc/projects.list`), a fixed path or `other`, never a path as sent; methods outside the
 * usual ones are `OTHER`.
 *
 * @module
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { HttpMetrics } from "../../edge/edge_types.ts";
import type { ConnectionStats } from "../../edge/serve.ts";
import { counterOf } from "./registry.ts";

/** Request durations, in seconds: from a fast read to a slow page. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Registers the HTTP metrics; `connections` reads the connection layer's figures. */
export function httpMetrics(
  registry: Registry,
  { connections }: { connections?: () => ConnectionStats } = {},
): HttpMetrics {
  // Counted here and handed to prom-client at scrape time: its `inc` hashes the labels on each
  // call. Durations go to its histogram, through the child of each route and method.
  const routes = new Map<string, Map<string, RouteMethod>>();
  new Counter({
    name: "http_requests_total",
    help: "HTTP requests answered, by route template, method and status",
    labelNames: ["route", "method", "status"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [route, methods] of routes) {
        for (const [method, { statuses }] of methods) {
          for (const [status, n] of statuses) this.inc({ route, method, status }, n);
        }
      }
    },
  });
  const durations = new Histogram({
    name: "http_request_duration_seconds",
    help: "Time from a request's arrival at the handler to its answer, by route and method",
    labelNames: ["route", "method"],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const refusals = new Counter({
    name: "rate_limit_refusals_total",
    help: "Requests refused with 429: by the per-key limit (key) or the failed key checks' " +
      "(auth_failures)",
    labelNames: ["limit"],
    registers: [registry],
  });
  for (const limit of ["key", "auth_failures"]) refusals.inc({ limit }, 0);
  if (connections) connectionMetrics(registry, connections);

  return {
    request(route, method, status, seconds) {
      let methods = routes.get(route);
      if (!methods) routes.set(route, methods = new Map());
      let entry = methods.get(method);
      if (!entry) {
        entry = { durations: durations.labels({ route, method }), statuses: new Map() };
        methods.set(method, entry);
      }
      entry.durations.observe(seconds);
      entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
    },
    refused(limit) {
      refusals.inc({ limit });
    },
  };
}

interface RouteMethod {
  durations: Histogram.Internal<string>;
  /** Requests answered, by status. */
  statuses: Map<number, number>;
}

function connectionMetrics(registry: Registry, stats: () => ConnectionStats): void {
  new Gauge({
    name: "http_connections_open",
    help: "HTTP connections open now",
    registers: [registry],
    collect() {
      this.set(stats().open);
    },
  });
  new Gauge({
    name: "http_connections_idle",
    help: "HTTP connections open now and waiting for a request",
    registers: [registry],
    collect() {
      this.set(stats().waiting);
    },
  });
  counterOf(registry, {
    name: "http_connections_accepted_total",
    help: "HTTP connections accepted",
    read: () => [{ value: stats().accepted }],
  });
  counterOf(registry, {
    name: "http_connections_closed_total",
    help: "HTTP connections closed by the server: evicted at the cap, refused with every " +
      "connection busy, idle, or past the header or body timeout",
    labelNames: ["reason"],
    read: () => {
      const s = stats();
      return [
        { labels: { reason: "evicted" }, value: s.evicted },
        { labels: { reason: "refused" }, value: s.refused },
        { labels: { reason: "idle" }, value: s.idleClosed },
        { labels: { reason: "headers_timeout" }, value: s.headersTimedOut },
        { labels: { reason: "body_timeout" }, value: s.bodyTimedOut },
      ];
    },
  });
}
