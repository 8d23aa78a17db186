/**
 * Zod schemas shared by the probe service and its typed client.
 *
 * @module
 */
export * from "./alerts.ts";
export * from "./alert_event.ts";
export * from "./envelope.ts";
export * from "./expect.ts";
export * from "./iam_alive.ts";
export * from "./instant.ts";
export * from "./json.ts";
export * from "./probe.ts";
export * from "./kinds/mod.ts";
export * from "./location.ts";
export * from "./api_keys.ts";
export * from "./sessions.ts";
export * from "./runner_protocol.ts";
export * from "./project.ts";
export * from "./settings.ts";
export * from "./results.ts";
export * from "./targets.ts";
export * from "./incidents.ts";
export * from "./overview.ts";
export * from "./status_pages.ts";
export * from "./badges.ts";
export * from "./secrets.ts";
export * from "./operator.ts";
export * from "./heartbeats.ts";
export * from "./audit.ts";
