import { router } from "./init.ts";
import { probesRouter } from "./routers/probes.ts";
import { projectsRouter } from "./routers/projects.ts";
import { resultsRouter } from "./routers/results.ts";
import { settingsRouter } from "./routers/settings.ts";

export const appRouter = router({
  projects: projectsRouter,
  probes: probesRouter,
  settings: settingsRouter,
  results: resultsRouter,
});

/** The router's type: all the typed client needs, imported as a type only. */
export type AppRouter = typeof appRouter;
