/**
 * What each mutation changes, for its audit entry (`audit.ts`): the resource's type, how its
 * mutation names it (from the input, or the answer for a create), and the query that reads it
 * as a viewer sees it, secrets masked by the API's own rules. Every mutation of the API is
 * here (`audit_test.ts` fails on one that is not); the runner protocol's are the service's own
 * runners reporting, not changes anyone makes.
 *
 * @module
 */
import type { Budget } from "../storage/database.ts";
import { getProbe } from "../domain/probes.ts";
import { getProject } from "../domain/projects.ts";
import { getStatusPage } from "../domain/status_pages.ts";
import { getTarget } from "../domain/targets.ts";
import type { Role } from "../domain/principal.ts";
import type { Context } from "./context.ts";
import { shown } from "./shown.ts";

/** The fields naming one resource: a read query's input (`{ project, probeId }`). */
export type ResourceRef = Record<string, string>;

type Fields = Record<string, unknown>;

export interface AuditRule {
  /** The resource's type, as the audit log's `resource.type` and filter name it. */
  type: string;
  /**
   * - `create`: the answer names the resource; the entry holds it after.
   * - `update`: read before and after; the entry holds the fields that changed.
   * - `delete`: read before; the entry holds it whole.
   * - `action`: something done rather than stored (a run, a test message): no read, and the
   *   entry is written once it is done, not with it (its effects, a sent message or a run's
   *   result, are not the procedure's transaction's to roll back).
   */
  kind: "create" | "update" | "delete" | "action";
  /** The resource, from the mutation's input and (once done) its answer's `data`. */
  ref(input: Fields, data: Fields | undefined): ResourceRef | null;
  /** The query reading it: its `data` is the resource, or a list to `pick` it from. */
  read?: string;
  /**
   * What `read` answers as its `data`, read by the domain's own function (as `read`'s
   * procedure does, for the reader `ctx` names): a third of the procedure's cost, without its
   * steps and its output schema. `read` is then the documentation of what it stands for.
   */
  load?: (ctx: Context, ref: ResourceRef) => Promise<unknown>;
  /** The write's answer's `data` is the resource as `read` shows it: no read after. */
  answers?: true;
  /**
   * Its verb hands over the resource as `read` shows it before and after its write (`stored`,
   * `storage/joined.ts`): no read before (nor after). Without, a verb that hands over the
   * resource after its write spares the read after.
   */
  tells?: true;
  /** The resource in a list read (maintenance windows and badges have no single read). */
  pick?: (data: unknown, ref: ResourceRef) => unknown;
  /** The role of the read: a viewer's (secrets masked) unless it needs more. */
  readAs?: Role;
  /** Fields that are secrets even to a viewer's read: shown `<redacted>`. */
  secrets?: readonly string[];
  /** The secret the operation replaces (a rotation), which no read shows changing. */
  renews?: string;
  /** The resource's id when its ref holds none (the settings): else the ref's values, `/`-joined. */
  id?: string;
  /** Whether its verb retries after a failed transaction of its own: savepoints for it. */
  retries?: true;
  /** The pool of its transaction (`withBudget`): a long write keeps its own budget. */
  budget?: Budget;
}

/**
 * A name or id from the input as text: the input is the procedure's validated one, where a
 * name is a string and an id a string or a number.
 */
const text = (value: unknown) =>
  typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "bigint"
    ? String(value)
    : "";
const byId = (data: unknown, ref: ResourceRef) =>
  Array.isArray(data) ? data.find((item) => item?.id === ref.id) ?? null : null;
const project = (input: Fields) => ({ project: text(input.project) });
const probe = (input: Fields, data?: Fields) => ({
  project: text(data?.project ?? input.project),
  probeId: text(data?.probe_id ?? input.probeId),
});
const only = (name: string) => (input: Fields) => ({ [name]: text(input[name]) });
const none = () => ({});

const PROBE = {
  type: "probe",
  read: "probes.get",
  load: async (ctx: Context, ref: ResourceRef) =>
    shown(ctx).probe(
      await getProbe({
        db: ctx.db,
        ref: { project: ref.project, probeId: ref.probeId },
        defaults: ctx.probeDefaults,
      }),
    ),
  ref: probe,
} as const;
const TARGET = {
  type: "notification_target",
  read: "targets.get",
  load: async (ctx: Context, ref: ResourceRef) =>
    shown(ctx).target(await getTarget({ db: ctx.db, name: ref.name })),
  ref: only("name"),
} as const;
const PROJECT = {
  type: "project",
  read: "projects.get",
  load: (ctx: Context, ref: ResourceRef) =>
    getProject({ db: ctx.db, project: ref.project, names: ctx.probeDefaults }),
  ref: project,
} as const;
const LOCATION = {
  type: "location",
  read: "locations.get",
  ref: (input: Fields, data?: Fields) => ({ location: text(data?.name ?? input.location) }),
} as const;
const HEARTBEAT = {
  type: "heartbeat",
  read: "heartbeats.get",
  ref: (input: Fields, data?: Fields) => ({
    project: text(input.project),
    name: text(data?.name ?? input.name),
  }),
} as const;
const MAINTENANCE = {
  type: "maintenance_window",
  read: "maintenance.list",
  pick: byId,
  ref: (input: Fields, data?: Fields) => ({
    project: text(input.project),
    id: text(data?.id ?? input.id),
  }),
} as const;
// Read as an admin, the only role that may: a key's read never holds the key.
const API_KEY = {
  type: "api_key",
  read: "apiKeys.get",
  readAs: "admin",
  ref: only("name"),
} as const;
const BADGE = {
  ...MAINTENANCE,
  type: "badge",
  read: "badges.list",
  secrets: ["token", "urls"],
} as const;

/** The audit rule of every mutation of the API, by procedure path. */
export const AUDIT_RULES: Record<string, AuditRule> = {
  "projects.create": { ...PROJECT, kind: "create" },
  "projects.update": { ...PROJECT, kind: "update", tells: true },
  "projects.delete": { ...PROJECT, kind: "delete", budget: "projectDelete" },
  "probes.create": { ...PROBE, kind: "create", retries: true },
  "probes.createWithProject": { ...PROBE, kind: "create", retries: true },
  "probes.update": { ...PROBE, kind: "update" },
  "probes.delete": { ...PROBE, kind: "delete" },
  "probes.run": { type: "probe", kind: "action", ref: probe },
  "settings.updateIamAlive": {
    type: "settings",
    kind: "update",
    read: "settings.getIamAlive",
    ref: none,
    id: "iam-alive",
  },
  "settings.testIamAlive": { type: "settings", kind: "action", ref: none, id: "iam-alive" },
  "incidents.acknowledge": {
    type: "incident",
    kind: "update",
    read: "incidents.get",
    ref: only("id"),
  },
  "alerts.update": {
    type: "alert_policy",
    kind: "update",
    read: "alerts.get",
    ref: none,
    id: "global",
  },
  "alerts.updateProject": {
    type: "project_alerts",
    kind: "update",
    read: "alerts.getProject",
    ref: project,
  },
  "maintenance.create": { ...MAINTENANCE, kind: "create" },
  "maintenance.delete": { ...MAINTENANCE, kind: "delete" },
  "targets.create": { ...TARGET, kind: "create" },
  "targets.update": { ...TARGET, kind: "update" },
  "targets.delete": { ...TARGET, kind: "delete" },
  "targets.test": { ...TARGET, kind: "action" },
  "statusPages.update": {
    type: "status_page",
    kind: "update",
    read: "statusPages.get",
    load: (ctx, ref) => getStatusPage({ db: ctx.db, project: ref.project }),
    answers: true,
    ref: project,
  },
  "badges.create": { ...BADGE, kind: "create" },
  "badges.rotate": { ...BADGE, kind: "update", renews: "token" },
  "badges.delete": { ...BADGE, kind: "delete" },
  "locations.create": { ...LOCATION, kind: "create" },
  "locations.update": { ...LOCATION, kind: "update" },
  "locations.delete": { ...LOCATION, kind: "delete" },
  "locations.rotateToken": { ...LOCATION, kind: "update", renews: "token" },
  "heartbeats.create": { ...HEARTBEAT, kind: "create" },
  "heartbeats.update": { ...HEARTBEAT, kind: "update" },
  "heartbeats.delete": { ...HEARTBEAT, kind: "delete" },
  "apiKeys.create": { ...API_KEY, kind: "create" },
  "apiKeys.update": { ...API_KEY, kind: "update" },
  "apiKeys.delete": { ...API_KEY, kind: "delete" },
  "apiKeys.rotate": { ...API_KEY, kind: "update", renews: "key" },
  "sessions.delete": {
    type: "session",
    kind: "delete",
    ref: only("id"),
    read: "sessions.list",
    pick: byId,
  },
};
