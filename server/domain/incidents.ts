/**
 * Reading incidents, and acknowledging them (which stops their reminders). Incidents are opened
 * and resolved by recorded runs (`server/alerting/incidents.ts`), never through the API.
 *
 * @module
 */
import type { Incident, IncidentDetail, IncidentListInput, LocationStates } from "@probe/shared";
import { type Selectable, sql } from "kysely";
import type { Db } from "../storage/database.ts";
import type { IncidentsTable } from "../storage/schema.ts";
import { displayLabel, notifyAcknowledged } from "../alerting/incidents.ts";
import { DomainError, notFound as missing } from "./errors.ts";
import { among, type Visible } from "./visible.ts";

const iso = (value: Date | string | null) => value === null ? null : new Date(value).toISOString();

/** The dependency holding an incident back, as the read names it (a `select` column). */
const suppressedBy = sql<{ label: string | null; url: string } | null>`(
  select json_build_object('label', p.label, 'url', p.url) from probes p
  where p.key = incidents.suppressed_by)`.as("suppressed_probe");

type IncidentRow = Selectable<IncidentsTable> & {
  suppressed_probe?: { label: string | null; url: string } | null;
};

function incidentOf(row: IncidentRow): Incident {
  const started = new Date(row.started_at);
  const resolved = row.resolved_at === null ? null : new Date(row.resolved_at);
  return {
    id: String(row.id),
    project: row.project,
    probe_id: row.probe_id,
    label: row.label,
    state: resolved ? "resolved" : "open",
    started_at: started.toISOString(),
    resolved_at: iso(resolved),
    duration_seconds: resolved ? Math.round((resolved.getTime() - started.getTime()) / 1000) : null,
    resolution: row.resolution,
    cause: row.cause,
    runs_failed: row.runs_failed,
    last_error: row.last_error,
    acknowledged_at: iso(row.acknowledged_at),
    locations: row.locations as LocationStates | null,
    ...(row.suppressed_by !== null && {
      suppressed: `suppressed: ${
        row.suppressed_probe
          ? displayLabel(row.suppressed_probe.label, row.suppressed_probe.url)
          : "a deleted probe"
      } is down`,
    }),
  };
}

const notFound = () => new DomainError("not_found", "Incident not found");

/** A valid id, or a 404: a path that names no incident finds none. */
function idOf(id: string): string {
  if (!/^[1-9][0-9]{0,17}$/.test(id)) throw notFound();
  return id;
}

/** Incidents newest first, a page at a time (`before`: the last id of the previous page). */
export async function listIncidents(
  { db, input, visible }: { db: Db; input: IncidentListInput; visible?: Visible },
): Promise<{ data: Incident[]; meta: { count: number; next_before: string | null } }> {
  let query = db.selectFrom("incidents").selectAll().select(suppressedBy);
  if (visible !== undefined) query = query.where(among("project", visible));
  if (input.probe_id !== undefined) {
    if (input.project === undefined) {
      throw new DomainError("validation_failed", "probe_id needs project", [
        { path: "project", message: "is required with probe_id" },
      ]);
    }
    // By the probe's key: its incidents from before a change of its id are its own too.
    const probe = await db.selectFrom("probes").select("key")
      .where("project", "=", input.project).where("probe_id", "=", input.probe_id)
      .executeTakeFirst();
    if (!probe) throw missing("Probe");
    query = query.where("probe_key", "=", probe.key);
  } else if (input.project !== undefined) query = query.where("project", "=", input.project);
  if (input.state === "open") query = query.where("resolved_at", "is", null);
  if (input.state === "resolved") query = query.where("resolved_at", "is not", null);
  if (input.before !== undefined) query = query.where("id", "<", input.before);
  const rows = await query.orderBy("id", "desc").limit(input.limit + 1).execute();
  const more = rows.length > input.limit;
  const data = rows.slice(0, input.limit).map(incidentOf);
  return {
    data,
    meta: { count: data.length, next_before: more ? data[data.length - 1].id : null },
  };
}

/** One incident with the notifications sent (or still to send) for it. */
export async function getIncident(
  { db, id, visible }: { db: Db; id: string; visible?: Visible },
): Promise<IncidentDetail> {
  const row = await db.selectFrom("incidents").selectAll().select(suppressedBy)
    .where("id", "=", idOf(id)).$if(
      visible !== undefined,
      (q) => q.where(among("project", visible)),
    )
    .executeTakeFirst();
  if (!row) throw notFound();
  const notifications = await db.selectFrom("notifications")
    .select([
      "id",
      "event",
      "target",
      "status",
      "attempts",
      "created_at",
      "delivered_at",
      "last_error",
    ])
    .where("incident_id", "=", row.id).orderBy("created_at").orderBy("id").execute();
  return {
    ...incidentOf(row),
    notifications: notifications.map((n) => ({
      id: n.id,
      type: n.event,
      target: n.target,
      status: n.status,
      attempts: n.attempts,
      created_at: new Date(n.created_at).toISOString(),
      delivered_at: iso(n.delivered_at),
      last_error: n.last_error,
    })),
  };
}

/**
 * Acknowledges an open incident: no more reminders for it, and the targets told of it are told
 * it is acknowledged (`probe.acknowledged`: PagerDuty and Opsgenie acknowledge their alert).
 * Acknowledging again changes nothing and tells no one; a resolved incident cannot be
 * acknowledged (409).
 */
export function acknowledgeIncident(
  { db, id, now = new Date(), visible }: { db: Db; id: string; now?: Date; visible?: Visible },
): Promise<Incident> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.updateTable("incidents")
      .set({ acknowledged_at: now, next_reminder_at: null })
      .where("id", "=", idOf(id)).$if(
        visible !== undefined,
        (q) => q.where(among("project", visible)),
      ).where("resolved_at", "is", null)
      .where("acknowledged_at", "is", null)
      .returningAll().returning(suppressedBy).executeTakeFirst();
    if (row) {
      await notifyAcknowledged(trx, id, now);
      return incidentOf(row);
    }
    const current = await trx.selectFrom("incidents").selectAll().select(suppressedBy)
      .where("id", "=", id).$if(visible !== undefined, (q) => q.where(among("project", visible)))
      .executeTakeFirst();
    if (!current) throw notFound();
    if (current.resolved_at !== null) throw new DomainError("conflict", "Incident is resolved");
    return incidentOf(current);
  });
}
