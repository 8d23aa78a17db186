import { router } from "./init.ts";
import { alertsRouter } from "./routers/alerts.ts";
import { apiKeysRouter } from "./routers/api_keys.ts";
import { auditLogRouter } from "./routers/audit_log.ts";
import { badgesRouter } from "./routers/badges.ts";
import { heartbeatsRouter } from "./routers/heartbeats.ts";
import { incidentsRouter } from "./routers/incidents.ts";
import { locationsRouter } from "./routers/locations.ts";
import { runnerRouter } from "./routers/runner.ts";
import { maintenanceRouter } from "./routers/maintenance.ts";
import { overviewRouter } from "./routers/overview.ts";
import { probesRouter } from "./routers/probes.ts";
import { projectsRouter } from "./routers/projects.ts";
import { resultsRouter } from "./routers/results.ts";
import { sessionsRouter } from "./routers/sessions.ts";
import { settingsRouter } from "./routers/settings.ts";
import { statusPagesRouter } from "./routers/status_pages.ts";
import { targetsRouter } from "./routers/targets.ts";
import { whoamiRouter } from "./routers/whoami.ts";

export const appRouter = router({
  projects: projectsRouter,
  probes: probesRouter,
  settings: settingsRouter,
  results: resultsRouter,
  incidents: incidentsRouter,
  alerts: alertsRouter,
  maintenance: maintenanceRouter,
  targets: targetsRouter,
  overview: overviewRouter,
  statusPages: statusPagesRouter,
  badges: badgesRouter,
  locations: locationsRouter,
  runner: runnerRouter,
  whoami: whoamiRouter,
  heartbeats: heartbeatsRouter,
  apiKeys: apiKeysRouter,
  auditLog: auditLogRouter,
  sessions: sessionsRouter,
});

/** The router's type: all the typed client needs, imported as a type only. */
export type AppRouter = typeof appRouter;
