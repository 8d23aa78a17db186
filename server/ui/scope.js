// @ts-check
/**
 * What the signed-in caller may do, from its role and projects (the session's, as
 * `GET /api/v1/whoami` also tells them). Pages show a control that changes something only to a
 * caller the service would let do it (docs/access.md); anyone else sees the same pages without
 * it, rather than a button that answers 403.
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
/** @import { Role } from "./api.js" */

/** @typedef {{ role: Role, projects: readonly string[] | null }} Access */

/**
 * What `access` may do, as the service decides it:
 * - `write`: change the projects it sees and what is theirs (an editor or an admin);
 * - `createProjects`: create projects (the same, unless limited to projects);
 * - `administer`: change what every project shares (notification targets, the global alert
 *   policy, locations, the service's settings) and read the keys and the audit log (an admin
 *   that is not limited to projects).
 * @param {Access} access
 */
export function abilities({ role, projects }) {
  const everyProject = projects === null;
  return {
    write: role !== "viewer",
    createProjects: role !== "viewer" && everyProject,
    administer: role === "admin" && everyProject,
  };
}

export const AccessContext = createContext(
  /** @type {Access} */ ({ role: "viewer", projects: [] }),
);

/** What the signed-in caller may do (`abilities`). */
export const useAbilities = () => abilities(useContext(AccessContext));

/** Whether the signed-in caller may create, change, run or delete in the projects it sees. */
export const useCanWrite = () => useAbilities().write;
