/**
 * The typed client of the probe service: projects, probes, their results and statistics,
 * incidents, the alert policy, maintenance windows, notification targets and the I'm alive
 * settings, with the same `{ data, meta }` answers as the REST API and one error class for every
 * failure.
 *
 * @example Create a project and a probe, list the probes, read a probe's statistics and incidents
 * ```ts
 * import { createProbeClient, ProbeApiError } from "@probe/client";
 *
 * const client = createProbeClient({
 *   baseUrl: Deno.env.get("PROBE_SERVICE_URL") ?? "http://127.0.0.1:8000",
 *   apiKey: Deno.env.get("SERVICE_API_KEY") ?? "",
 * });
 *
 * try {
 *   await client.projects.create({ project: "shop", label: "Web shop" });
 * } catch (e) {
 *   // Already there from an earlier run: fine.
 *   if (!(e instanceof ProbeApiError && e.code === "conflict")) throw e;
 * }
 * const { data: probe, meta } = await client.probes.create({
 *   project: "shop",
 *   url: "https://shop.example.com/health",
 *   latency: 500,
 * });
 * console.log(meta.created ? "probe created" : "probe rewritten");
 *
 * const probes = await client.probes.listByProject({ project: "shop" });
 * for (const p of probes.data) console.log(p.probe_id, p.method, p.url);
 *
 * // What the runner recorded for it over the last 24 hours (uptime is null before any run).
 * const { data: stats } = await client.results.stats({
 *   project: "shop",
 *   probeId: probe.probe_id,
 *   window: "24h",
 * });
 * console.log(`${stats.runs} runs, uptime ${stats.uptime ?? "-"}, p95 ${stats.p95 ?? "-"} ms`);
 *
 * // Alerts: this project's probes go down after one failing run; what is down now?
 * await client.alerts.updateProject({ project: "shop", failure_threshold: 1 });
 * const open = await client.incidents.list({ project: "shop", state: "open" });
 * for (const i of open.data) console.log(`#${i.id} ${i.label} down since ${i.started_at}`);
 * ```
 *
 * @module
 */
export { createProbeClient } from "./client.ts";
export type {
  AlertsApi,
  ApiKeysApi,
  AuditLogApi,
  BadgesApi,
  HeartbeatsApi,
  IncidentsApi,
  LocationsApi,
  MaintenanceApi,
  OverviewApi,
  ProbeClient,
  ProbeClientOptions,
  ProbesApi,
  ProjectsApi,
  ResultsApi,
  SettingsApi,
  StatusPagesApi,
  TargetsApi,
  WhoamiApi,
} from "./client.ts";
export { ProbeApiError } from "./error.ts";
export type * from "./api_types.ts";
