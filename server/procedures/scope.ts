/**
 * What a project-scoped principal (`principal.projects` not null: a stored key limited to
 * projects, or a signed-in user mapped to some) may reach. One seam for every procedure
 * (`scoped` below, run by `apiProcedure`), and one filter for the lists that span projects
 * (`visibleProjects`, read by the domain's cross-project queries):
 *
 * - a project it does not see is addressed as a project that does not exist: every call naming
 *   one (`project` in its path, query or body) is made under a name no project has, so it gets,
 *   byte for byte, the answer a missing project gets (404, or the empty list where that is the
 *   answer), and nobody can tell whether the project exists;
 * - the lists, the overview and the incidents span its projects only;
 * - creating a project, and changing what every project shares (notification targets, the
 *   global alert policy, locations), is refused (403 `forbidden`) whatever its role; the
 *   service's own settings, the keys and the audit log are refused to it even for reading.
 *
 * A principal that sees every project passes through untouched (one null check).
 *
 * @module
 */
import { DomainError } from "../domain/errors.ts";
import type { Principal } from "../domain/principal.ts";

/**
 * A valid project name that no project has: where a scoped principal names a project it does
 * not see, the call names this one instead. Random per process, so it cannot be created on
 * purpose, and valid, so that a body naming an unseen project passes the same validation as
 * one naming a missing project.
 */
export const UNSEEN_PROJECT = `unseen-${crypto.randomUUID()}`;

/**
 * How each router's procedures serve a scoped principal: `project` ones reach its projects alone
 * (a project named is checked, the lists are filtered); `shared` ones hold what every project
 * shares, which it may read as its role lets it (secrets masked as for a viewer: `shown.ts`)
 * and never change; `own` ones answer about the caller alone (its sessions). A router missing
 * here (settings, keys, the audit log, any new one) is refused to it, reads included: they tell
 * about the whole service or other callers.
 */
const SCOPED_ROUTERS: Readonly<Record<string, "project" | "shared" | "own">> = {
  projects: "project",
  probes: "project",
  heartbeats: "project",
  results: "project",
  incidents: "project",
  maintenance: "project",
  statusPages: "project",
  badges: "project",
  overview: "project",
  alerts: "project",
  whoami: "project",
  targets: "shared",
  locations: "shared",
  sessions: "own",
};

/** Procedures of `project` routers that are not about one project. */
const EXCEPTIONS: Readonly<Record<string, "shared" | "refused">> = {
  // The global alert policy, beside each project's (`alerts.getProject`).
  "alerts.get": "shared",
  "alerts.update": "shared",
  "projects.create": "refused",
};

/**
 * Why a scoped principal may not make this call at all, or null when it may (its project, if
 * it names one, is then checked by `scopedInput`).
 */
export function scopeRefusal(path: string, type: string): string | null {
  const kind = EXCEPTIONS[path] ?? SCOPED_ROUTERS[path.slice(0, path.indexOf("."))];
  if (kind === undefined) {
    return "A key limited to projects cannot use what concerns the whole service";
  }
  if (path === "projects.create") return "A key limited to projects cannot create projects";
  if (kind === "shared" && type === "mutation") {
    return "A key limited to projects cannot change what every project shares";
  }
  return null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The raw input with a project the principal does not see renamed to `UNSEEN_PROJECT`; the
 * input itself when it names none (or only ones it sees).
 */
export function scopedInput(projects: readonly string[], raw: unknown): unknown {
  if (!isRecord(raw) || typeof raw.project !== "string") return raw;
  return projects.includes(raw.project) ? raw : { ...raw, project: UNSEEN_PROJECT };
}

/**
 * The projects a call's lists span: the principal's, or undefined for every project. What the
 * domain's cross-project reads (`listProjects`, `listProbes`, `getOverview`, the incidents)
 * take as `visible`.
 */
export function visibleProjects(principal: Principal): readonly string[] | undefined {
  return principal.projects ?? undefined;
}

/** Refuses a scoped principal's call it may not make (403 `forbidden`). */
export function refuseOutOfScope(message: string): never {
  throw new DomainError("forbidden", message);
}
