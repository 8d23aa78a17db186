/**
 * The least role each procedure needs (docs/access.md), by router, in one table: `viewer` reads,
 * `editor` also changes projects and what belongs to them (probes, heartbeats, maintenance,
 * status pages, badges, a project's alert policy, incidents' acknowledgements), `admin` also
 * administers the service (keys, notification targets, the global alert policy, settings,
 * locations). The runner protocol takes location tokens only (`location`).
 *
 * `apiProcedure` (`init.ts`) enforces it on every call, REST and `/trpc` alike; a procedure
 * missing from the table needs `admin` (a new one is never open by mistake), and the router's
 * test (`access_test.ts`) fails until it has its row.
 *
 * @module
 */
import { DomainError } from "../domain/errors.ts";
import { type Principal, type Role, roleAllows } from "../domain/principal.ts";
import { ERRORS } from "./errors.ts";

/** What a procedure needs: a role at least, or a location token (`location`). */
export type Access = Role | "location";

/** Every procedure's rule, by router and procedure name. */
export const ACCESS: Readonly<Record<string, Readonly<Record<string, Access>>>> = {
  projects: { list: "viewer", get: "viewer", create: "editor", update: "editor", delete: "editor" },
  probes: {
    list: "viewer",
    listByProject: "viewer",
    get: "viewer",
    create: "editor",
    createWithProject: "editor",
    update: "editor",
    delete: "editor",
    run: "editor",
  },
  heartbeats: {
    list: "viewer",
    get: "viewer",
    pings: "viewer",
    create: "editor",
    update: "editor",
    delete: "editor",
  },
  results: { list: "viewer", stats: "viewer", status: "viewer", series: "viewer" },
  incidents: { list: "viewer", get: "viewer", acknowledge: "editor" },
  alerts: { get: "viewer", getProject: "viewer", updateProject: "editor", update: "admin" },
  maintenance: { list: "viewer", create: "editor", delete: "editor" },
  statusPages: { get: "viewer", update: "editor" },
  badges: { list: "viewer", create: "editor", rotate: "editor", delete: "editor" },
  overview: { get: "viewer" },
  // Anyone lists and ends their own dashboard sessions; an admin everyone's (`sessions.ts`).
  sessions: { list: "viewer", delete: "viewer" },
  whoami: { get: "viewer" },
  targets: {
    kinds: "viewer",
    list: "viewer",
    get: "viewer",
    create: "admin",
    update: "admin",
    delete: "admin",
    test: "admin",
  },
  settings: {
    getIamAlive: "viewer",
    listIamAliveDeliveries: "viewer",
    updateIamAlive: "admin",
    testIamAlive: "admin",
  },
  locations: {
    list: "viewer",
    get: "viewer",
    create: "admin",
    update: "admin",
    delete: "admin",
    rotateToken: "admin",
  },
  apiKeys: {
    list: "admin",
    get: "admin",
    create: "admin",
    update: "admin",
    delete: "admin",
    rotate: "admin",
  },
  // The audit log tells who changed what, from where: for those who administer.
  auditLog: { list: "admin" },
  runner: { claim: "location", results: "location" },
};

/** The rule of the procedure at `path` (`projects.get`); `admin` when it has none. */
export function accessOf(path: string): Access {
  const dot = path.indexOf(".");
  return ACCESS[path.slice(0, dot)]?.[path.slice(dot + 1)] ?? "admin";
}

/**
 * Refuses (403 `forbidden`) a call of the procedure at `path` that `principal`'s role may not
 * make. A viewer's change is refused with the message read-only keys always got.
 */
export function enforceRole(principal: Principal, path: string, type: string): void {
  const needed = accessOf(path);
  if (needed === "location" || roleAllows(principal.role, needed)) return;
  const message = principal.role === "viewer" && type === "mutation"
    ? ERRORS.forbidden.message
    : `This key's role (${principal.role}) may not do this: it needs ${needed}`;
  throw new DomainError("forbidden", message);
}
