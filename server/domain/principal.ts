/**
 * Who is calling, decided once at the edge (an API key, configured or stored, or a dashboard
 * session) and handed to every procedure as `ctx.principal`: its role decides what it may do,
 * its projects what it may see, and its name is what the audit log records.
 */

/** What a caller may do: `viewer` reads, `editor` also changes, `admin` also administers. */
export type Role = "viewer" | "editor" | "admin";

export const ROLES: readonly Role[] = ["viewer", "editor", "admin"];

/** Whether `role` is at least `needed` (`admin` ⊇ `editor` ⊇ `viewer`). */
export function roleAllows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/**
 * How a caller proved who it is. A location token (`location_token`, named by its location)
 * may use the runner protocol only: no other procedure accepts it, whatever its role says.
 */
export type PrincipalSource = "configured_key" | "stored_key" | "session" | "location_token";

export interface Principal {
  source: PrincipalSource;
  /**
   * The name the audit log and the keys list show: a stored key's name, a signed-in user's
   * email (or subject), or the name given to a configured key (`SERVICE_API_KEY`, ...).
   */
  name: string;
  role: Role;
  /** The projects it is limited to; null when it sees every project. */
  projects: readonly string[] | null;
  /** The session's id, for a dashboard session. */
  sessionId?: string;
}

/** Whether the principal may see the project `name`. */
export function seesProject(principal: Principal, name: string): boolean {
  return principal.projects === null || principal.projects.includes(name);
}
