/**
 * The server's own files (the generated OpenAPI document, the PGlite template, the dashboard's
 * files, the threads' entries), found from `server/`, whether the server runs as modules or as
 * the bundles `deno task start` builds in `server/.bundle/` (`server/operations/bundle.ts`). A
 * module names its files through here, never from its own `import.meta.url`, which inside a
 * bundle is the bundle's.
 *
 * @module
 */

/** The folder of the bundles, below `server/`. */
export const BUNDLE_DIR = ".bundle/";

/** Whether this runs inside one of the bundles. */
export const BUNDLED = import.meta.url.includes(`/${BUNDLE_DIR}`);

// `server/` is the parent of this module's folder, and of the bundles' alike.
const SERVER_DIR = new URL("../", import.meta.url);

/** A file of the server's, by its path below `server/`. */
export function serverFile(path: string): URL {
  return new URL(path, SERVER_DIR);
}

/** The modules that start the service's threads, by their path below `server/`. */
export type ThreadModule = "runner/execute_worker.ts" | "storage/pglite_worker.ts";

/** The bundle built of `module` (a path below `server/`), by its path below `server/`. */
export function bundleFileOf(module: string): string {
  return `${BUNDLE_DIR}${module.slice(module.lastIndexOf("/") + 1).replace(/\.ts$/, ".js")}`;
}

/** What a thread starts from: its bundle when this runs bundled, else its module. */
export function threadEntry(module: ThreadModule): URL {
  return serverFile(BUNDLED ? bundleFileOf(module) : module);
}
