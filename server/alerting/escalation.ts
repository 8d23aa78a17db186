/**
 * Escalation: the alert policy's `escalation` steps tell more targets while an incident stays
 * open and unacknowledged. A step `{after_minutes, targets}` sends the incident's `probe.down`
 * (its data marked with `escalation_step`, the step's number from 1) to its targets
 * `after_minutes` after the incident opened. Acknowledging stops the steps to come; recovery
 * tells every target that was told (`toldTargets`), so a pager resolves what it opened.
 *
 * Each incident keeps how many steps were sent (`escalation_step`) and when the next is due
 * (`next_escalation_at`). The loop that sends reminders sends the steps too: due incidents are
 * claimed with `SKIP LOCKED`, and the step count moves in the transaction that writes the
 * notifications to the outbox, so with several instances each step goes out once per incident.
 *
 * @module
 */
import { ALERT_LOG_TARGET, type EscalationStep } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { enqueue, type Outgoing } from "./outbox/outbox.ts";
import { claimDueIncidents, openIncidentEvent } from "./incident_events.ts";
import { effectivePolicy } from "./policy_sql.ts";

const MINUTE = 60_000;

/**
 * Sets when the first step is due for incidents just opened: `after_minutes` of the first step
 * of their project's effective policy after they started; none when the policy is off or has no
 * steps. Call in the transaction that opens them.
 */
export async function scheduleEscalation(trx: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update incidents i
    set next_escalation_at = i.started_at + make_interval(mins => s.first)
    from (
      select o.id, ${effectivePolicy("enabled")},
        (coalesce(pa.escalation, g.escalation) -> 0 ->> 'after_minutes')::int as first
      from incidents o
      cross join alert_settings g
      left join project_alerts pa on pa.project = o.project
      where o.id in (select x.id from json_to_recordset(${json(ids.map((id) => ({ id })))})
                       as x(id bigint))
    ) s
    where i.id = s.id and s.enabled and s.first is not null`.execute(trx);
}

/**
 * Sends the escalation steps that are due, as the project's policy says now: for each open,
 * unacknowledged incident whose next step's time has come, that step's targets get its
 * `probe.down` marked with `escalation_step` (every step due by now, should a poll come late),
 * and the next step's time is set (null after the last). Returns the notifications written.
 */
export function escalateDue(db: Db, now: Date, limit = 100): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const rows = await claimDueIncidents<{
      escalation_step: number;
      enabled: boolean;
      escalation: EscalationStep[];
    }>(trx, "next_escalation_at", now, limit, ["enabled", "escalation"]);
    if (rows.length === 0) return 0;
    const told = await downTargets(trx, rows.map((r) => String(r.id)), { existing: false });
    const outgoing: Outgoing[] = [];
    const next = rows.map((incident) => {
      // Not told yet (its dependency down, or flapping): its steps wait until it is, looked at
      // again each minute and behind the incidents that are due.
      if (!told.has(String(incident.id))) {
        const later = new Date(now.getTime() + MINUTE).toISOString();
        return {
          id: String(incident.id),
          was: incident.escalation_step,
          step: incident.escalation_step,
          at: later,
        };
      }
      const started = new Date(incident.started_at).getTime();
      // A policy switched off, or its steps taken away since, escalates no further.
      const steps = incident.enabled ? incident.escalation : [];
      const dueAt = (step: number) => started + steps[step].after_minutes * MINUTE;
      let step = incident.escalation_step;
      while (step < steps.length && dueAt(step) <= now.getTime()) {
        const event = openIncidentEvent("probe.down", now, incident);
        event.data.escalation_step = step + 1;
        outgoing.push({ event, targets: steps[step].targets, incidentId: String(incident.id) });
        step++;
      }
      return {
        id: String(incident.id),
        was: incident.escalation_step,
        step,
        at: step < steps.length ? new Date(dueAt(step)).toISOString() : null,
      };
    });
    // The rows are held by this transaction; the step count it read is checked all the same.
    await sql`
      update incidents i set escalation_step = x.step, next_escalation_at = x.at
      from json_to_recordset(${json(next)}) as x(id bigint, was integer, step integer,
                                                  at timestamptz)
      where i.id = x.id and i.escalation_step = x.was`.execute(trx);
    return await enqueue(trx, outgoing);
  });
}

/**
 * The targets each incident's `probe.down` went to (when it opened and at each escalation step)
 * that still exist: recovery tells them all, whatever the policy names now.
 */
export const toldTargets = (trx: Db, ids: readonly string[]) =>
  downTargets(trx, ids, { existing: true });

/** The targets of each incident's `probe.down` notifications; `existing`: those still there. */
async function downTargets(
  trx: Db,
  ids: readonly string[],
  { existing }: { existing: boolean },
): Promise<Map<string, string[]>> {
  const told = new Map<string, string[]>();
  if (ids.length === 0) return told;
  const { rows } = await sql<{ incident_id: string; target: string }>`
    select distinct n.incident_id::text as incident_id, n.target
    from notifications n
    where n.incident_id in (select x.id from json_to_recordset(${
    json(ids.map((id) => ({ id })))
  }) as x(id bigint))
      and n.event = 'probe.down'
      and (${!existing} or n.target = ${ALERT_LOG_TARGET}
           or exists (select 1 from notification_targets t where t.name = n.target))
    order by n.incident_id::text, n.target`.execute(trx);
  for (const { incident_id, target } of rows) {
    told.set(incident_id, [...told.get(incident_id) ?? [], target]);
  }
  return told;
}
