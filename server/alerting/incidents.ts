/**
 * What a state change means: entering `down` opens an incident (one per probe at most: a unique
 * index on open incidents) and notifies `probe.down`; leaving it resolves the incident and
 * notifies `probe.recovered`; `up` to `degraded` notifies `probe.degraded` when the policy asks.
 * Each decision writes its notifications to the outbox in the same transaction. Reminders go out
 * every `reminder_minutes` while an incident is open and not acknowledged.
 *
 * Incidents are resolved without notifications when their probe changes (`changed`), is deleted
 * (`deleted`) or its project is disabled (`disabled`).
 *
 * @module
 */
import type { AlertEventType } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { enqueue, type Outgoing } from "./outbox/outbox.ts";
import type { StateChange } from "./states.ts";
import { scheduleEscalation, toldTargets } from "./escalation.ts";
import {
  recheckSuppressed,
  type Released,
  releaseDependents,
  suppressOpened,
} from "./dependencies.ts";
export {
  causeOf,
  claimDueIncidents,
  displayLabel,
  type DueIncident,
  eventOf,
  type IncidentRow,
  openIncidentEvent,
  type Resolution,
} from "./incident_events.ts";
import {
  causeOf,
  claimDueIncidents,
  displayLabel,
  eventOf,
  type IncidentRow,
  openIncidentEvent,
  type Resolution,
} from "./incident_events.ts";

/**
 * Opens and resolves incidents for the state changes of recorded runs, counts further failures
 * of open ones, and writes the notifications they call for. Call in the recording transaction.
 * `silent` changes (maintenance) are never passed here: they do not move states.
 */
export async function applyStateChanges(
  trx: Db,
  changes: readonly StateChange[],
  now: Date,
): Promise<{ opened: number; resolved: number; notifications: number }> {
  const opening = changes.filter((c) => c.to === "down" && c.from !== "down");
  const recovering = changes.filter((c) => c.from === "down" && c.to !== "down");
  const failingOn = changes.filter((c) => c.from === "down" && c.to === "down" && !c.passing);
  const outgoing: Outgoing[] = [];

  let openedCount = 0;
  if (opening.length > 0) {
    const rows = opening.map((c) => ({
      probe_key: c.key,
      project: c.project,
      probe_id: c.probeId,
      label: displayLabel(c.label, c.url),
      started_at: c.startedAt.toISOString(),
      cause: causeOf(c) ?? "failed",
      error: c.error ?? "failed",
      runs_failed: c.failStreak,
      locations: c.locations ?? null,
      next_reminder_at: c.policy.enabled && c.policy.reminderMinutes > 0
        ? new Date(c.startedAt.getTime() + c.policy.reminderMinutes * 60_000).toISOString()
        : null,
    }));
    const { rows: opened } = await sql<IncidentRow>`
      insert into incidents
        (project, probe_key, probe_id, label, started_at, cause, runs_failed, last_error,
         next_reminder_at, locations)
      select x.project, x.probe_key, x.probe_id, x.label, x.started_at, x.cause, x.runs_failed,
             x.error, x.next_reminder_at, x.locations
      from json_to_recordset(${json(rows)})
        as x(probe_key bigint, project text, probe_id text, label text, started_at timestamptz,
             cause text, error text, runs_failed integer, next_reminder_at timestamptz,
             locations json)
      order by x.probe_key
      on conflict (probe_key) where resolved_at is null do nothing
      returning *`.execute(trx);
    openedCount = opened.length;
    await scheduleEscalation(trx, opened.map((i) => String(i.id)));
    const byKey = new Map(opened.map((i) => [String(i.probe_key), i]));
    const suppressed = await suppressOpened(trx, opened.map((i) => String(i.id)));
    for (const c of opening) {
      const incident = byKey.get(c.key);
      if (!incident || !c.policy.enabled || c.quiet || suppressed.has(String(incident.id))) {
        continue;
      }
      outgoing.push({
        event: eventOf("probe.down", now, {
          ...named(c),
          incident,
          state: "down",
          cause: incident.cause,
          run: c,
        }),
        targets: c.policy.targets,
        incidentId: String(incident.id),
      });
    }
  }

  let resolved = 0;
  if (recovering.length > 0) {
    const closed = await resolve(trx, recovering.map((c) => ({ key: c.key, at: c.startedAt })));
    resolved = closed.length;
    // Every target told of the incident hears of its recovery (a pager resolves what it opened).
    const told = await toldTargets(trx, closed.map((i) => String(i.id)));
    const byKey = new Map(closed.map((i) => [String(i.probe_key), i]));
    for (const c of recovering) {
      const incident = byKey.get(c.key) ?? null;
      // Quiet while flapping; and an incident its dependency kept untold recovers untold.
      if (!c.policy.enabled || !c.policy.notifyRecovered || c.quiet) continue;
      if (incident?.suppressed_by != null) continue;
      outgoing.push({
        event: eventOf("probe.recovered", now, {
          ...named(c),
          incident,
          state: c.to,
          cause: incident?.cause ?? null,
          run: { error: incident?.last_error ?? null },
        }),
        targets: [...c.policy.targets, ...incident ? told.get(String(incident.id)) ?? [] : []],
        incidentId: incident ? String(incident.id) : null,
      });
    }
    outgoing.push(...await releasedOf(trx, closed.map((i) => String(i.probe_key)), now));
  }

  for (const c of changes) {
    if (!c.policy.enabled || !c.policy.notifyDegraded || c.quiet) continue;
    const type: AlertEventType | null = c.from === "up" && c.to === "degraded"
      ? "probe.degraded"
      : c.from === "degraded" && c.to === "up" && c.policy.notifyRecovered
      ? "probe.recovered"
      : null;
    if (!type) continue;
    outgoing.push({
      event: eventOf(type, now, {
        ...named(c),
        incident: null,
        state: c.to,
        cause: causeOf(c),
        run: c,
      }),
      targets: c.policy.targets,
      incidentId: null,
    });
  }

  if (failingOn.length > 0) {
    const rows = failingOn.map((c) => ({ k: c.key, e: c.error ?? "failed" }));
    await sql`
      update incidents i set runs_failed = i.runs_failed + 1, last_error = x.e
      from json_to_recordset(${json(rows)}) as x(k bigint, e text)
      where i.probe_key = x.k and i.resolved_at is null`.execute(trx);
  }

  const notifications = await enqueue(trx, outgoing);
  return { opened: openedCount, resolved, notifications };
}

const named = (c: StateChange) => ({
  project: c.project,
  probeId: c.probeId,
  label: displayLabel(c.label, c.url),
  url: c.url,
  locations: c.locations ?? null,
});

/** The `probe.down` of the incidents these probes' resolved incidents kept untold, now free. */
async function releasedOf(trx: Db, keys: readonly string[], now: Date): Promise<Outgoing[]> {
  return await toldReleased(trx, await releaseDependents(trx, keys, now), now);
}

/**
 * After what probe `key` depends on was rewritten: its incident, if a dependency no longer
 * named kept it untold, is told now (`recheckSuppressed`). Call in the write's transaction.
 */
export async function dependenciesRewritten(trx: Db, key: string, now: Date): Promise<number> {
  return await enqueue(trx, await toldReleased(trx, await recheckSuppressed(trx, [key], now), now));
}

/**
 * The `probe.down` of incidents released from their suppression (held by this transaction). One
 * whose probe is flapping is left to the settling, which tells it once it is stable (told here
 * as well, it would be told twice); read in a statement of its own, after the incidents were
 * held, so a settling that held them first is seen.
 */
async function toldReleased(trx: Db, released: Released[], now: Date): Promise<Outgoing[]> {
  if (released.length === 0) return [];
  // Escalation was held back with the rest: its steps count from the incident's start, as always.
  await scheduleEscalation(trx, released.map((i) => String(i.id)));
  const { rows: flapping } = await sql<{ probe_key: number | string }>`
    select probe_key from probe_verdicts where flapping_since is not null and probe_key in (
      select x.k from json_to_recordset(${
    json(released.map((i) => ({ k: String(i.probe_key) })))
  }) as x(k bigint))`.execute(trx);
  const quiet = new Set(flapping.map((f) => String(f.probe_key)));
  return released.filter((i) => i.enabled && !quiet.has(String(i.probe_key))).map((incident) => ({
    event: openIncidentEvent("probe.down", now, incident),
    targets: incident.targets,
    incidentId: String(incident.id),
  }));
}

async function resolve(
  trx: Db,
  probes: readonly { key: string; at: Date }[],
  resolution: Resolution = "recovered",
): Promise<IncidentRow[]> {
  const rows = probes.map((p) => ({ k: p.key, at: p.at.toISOString() }));
  const { rows: closed } = await sql<IncidentRow>`
    update incidents i
    set resolved_at = greatest(x.at, i.started_at), resolution = ${resolution},
        next_reminder_at = null
    from json_to_recordset(${json(rows)}) as x(k bigint, at timestamptz)
    where i.probe_key = x.k and i.resolved_at is null
    returning i.*`.execute(trx);
  return closed;
}

/**
 * Resolves the open incidents of some probes, or of a project, without notifications: the
 * probe changed, was deleted, or its project was disabled.
 */
export async function resolveQuietly(
  trx: Db,
  where: { keys: readonly string[] } | { project: string },
  resolution: Exclude<Resolution, "recovered">,
  at: Date,
): Promise<number> {
  let keys: string[];
  if ("keys" in where) {
    if (where.keys.length === 0) return 0;
    keys = (await resolve(trx, where.keys.map((key) => ({ key, at })), resolution))
      .map((i) => String(i.probe_key));
  } else {
    const { rows } = await sql<{ probe_key: number | string }>`
      update incidents set resolved_at = greatest(${at.toISOString()}::timestamptz, started_at),
        resolution = ${resolution}, next_reminder_at = null
      where project = ${where.project} and resolved_at is null
      returning probe_key`.execute(trx);
    keys = rows.map((r) => String(r.probe_key));
  }
  // A dependency no longer down (changed, deleted, disabled) keeps its dependents untold no more.
  await enqueue(trx, await releasedOf(trx, keys, at));
  return keys.length;
}

/**
 * Sends the reminders that are due: for each open, unacknowledged incident whose reminder time
 * has come, a `probe.reminder` to its project's targets, and the next reminder set. Incidents
 * are claimed with `SKIP LOCKED`, so instances running this side by side never remind twice.
 */
export function remindDue(db: Db, now: Date, limit = 100): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const rows = await claimDueIncidents<{
      enabled: boolean;
      targets: string[];
      reminder_minutes: number;
    }>(trx, "next_reminder_at", now, limit, ["enabled", "targets", "reminder_minutes"]);
    if (rows.length === 0) return 0;
    const next = rows.map((r) => ({
      id: String(r.id),
      at: r.enabled && r.reminder_minutes > 0
        ? new Date(now.getTime() + r.reminder_minutes * 60_000).toISOString()
        : null,
    }));
    await sql`
      update incidents i set next_reminder_at = x.at
      from json_to_recordset(${json(next)}) as x(id bigint, at timestamptz)
      where i.id = x.id`.execute(trx);
    return await enqueue(
      trx,
      rows.filter((r) => r.enabled && r.reminder_minutes > 0).map((incident) => ({
        event: openIncidentEvent("probe.reminder", now, incident),
        targets: incident.targets,
        incidentId: String(incident.id),
      })),
    );
  });
}

/**
 * Tells the targets that were told of an open incident (by its `probe.down` or a reminder) that
 * it was acknowledged: `probe.acknowledged`, which PagerDuty and Opsgenie act on (their alert is
 * acknowledged there too) and the other kinds show. Call it in the transaction that acknowledges,
 * once: when the incident goes from unacknowledged to acknowledged.
 */
export async function notifyAcknowledged(trx: Db, id: string, now: Date): Promise<number> {
  const { rows } = await sql<IncidentRow & { url: string | null; targets: string[] }>`
    select i.*,
      (select p.url from probes p where p.key = i.probe_key) as url,
      array(
        select distinct n.target from notifications n
        where n.incident_id = i.id and n.event in ('probe.down', 'probe.reminder')
        order by n.target
      ) as targets
    from incidents i
    where i.id = ${id} and i.resolved_at is null`.execute(trx);
  const incident = rows[0];
  if (!incident || incident.targets.length === 0) return 0;
  return await enqueue(trx, [{
    event: eventOf("probe.acknowledged", now, {
      incident,
      project: incident.project,
      probeId: incident.probe_id,
      label: incident.label,
      url: incident.url,
      state: "down",
      cause: incident.cause,
      run: { error: incident.last_error },
    }),
    targets: incident.targets,
    incidentId: id,
  }]);
}
