/**
 * Dependencies in alerting: an incident that opens while one of its probe's dependencies is
 * down (has an open incident) opens as usual but is not told: it keeps that dependency in
 * `suppressed_by`, sends no `probe.down`, no reminders and no escalation steps. When that
 * dependency recovers (or its incident is resolved otherwise), its dependents' incidents still
 * open are told then, unless another of their dependencies is still down (they wait for that
 * one). An incident resolved while suppressed was never told, so its recovery is not told either.
 *
 * The dependency's open incident is held (`for share`) while a dependent decides: a dependency
 * recovering meanwhile either waits for the dependent's transaction (and then sees its incident
 * to release it) or has resolved first (and the dependent is not suppressed).
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import type { DueIncident } from "./incident_events.ts";

const keyRows = (keys: readonly string[]) => json(keys.map((k) => ({ k })));

/**
 * Marks the incidents just opened (by id) whose probe depends on a probe that is down; returns
 * the ids marked. Call in the transaction that opened them.
 */
export async function suppressOpened(trx: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const opened = sql`select x.k from json_to_recordset(${keyRows(ids)}) as x(k bigint)`;
  await sql`
    select dep.id from incidents i
    join probe_dependencies d on d.probe_key = i.probe_key
    join incidents dep on dep.probe_key = d.depends_on and dep.resolved_at is null
    where i.id in (${opened})
    order by dep.id for share of dep`.execute(trx);
  const { rows } = await sql<{ id: number | string }>`
    update incidents i set suppressed_by = x.by, next_reminder_at = null, next_escalation_at = null
    from (
      select i2.id, min(d.depends_on) as by from incidents i2
      join probe_dependencies d on d.probe_key = i2.probe_key
      join incidents dep on dep.probe_key = d.depends_on and dep.resolved_at is null
      where i2.id in (${opened})
      group by i2.id
    ) x
    where i.id = x.id
    returning i.id`.execute(trx);
  return new Set(rows.map((r) => String(r.id)));
}

/** An incident released from its suppression, with what telling it needs of its policy. */
export type Released = DueIncident & {
  enabled: boolean;
  targets: string[];
  reminder_minutes: number;
};

/**
 * After these probes' incidents were resolved: the open incidents they suppressed wait for
 * another dependency still down, or are released (returned, with their policy, to be told now;
 * their reminders start from `now`). Call in the transaction that resolved them, after it.
 */
export function releaseDependents(
  trx: Db,
  keys: readonly string[],
  now: Date,
): Promise<Released[]> {
  return recheck(trx, "suppressed_by", keys, now);
}

/**
 * After what these probes depend on was rewritten: their open incident, if suppressed, waits for
 * a dependency still down (one it may have just gained) or is released as `releaseDependents`
 * releases (a dependency taken away while down holds it back no more). Call in the write's
 * transaction, after it.
 */
export function recheckSuppressed(
  trx: Db,
  keys: readonly string[],
  now: Date,
): Promise<Released[]> {
  return recheck(trx, "probe_key", keys, now);
}

/** The open, suppressed incidents whose `column` is one of `keys`, held and looked at again. */
async function recheck(
  trx: Db,
  column: "suppressed_by" | "probe_key",
  keys: readonly string[],
  now: Date,
): Promise<Released[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<Released>`
    with held as (
      select i.id from incidents i
      where i.resolved_at is null and i.suppressed_by is not null and i.${sql.ref(column)} in (
        select x.k from json_to_recordset(${keyRows(keys)}) as x(k bigint))
      order by i.id for update
    ), next as (
      select h.id, (
        select min(d.depends_on) from incidents i
        join probe_dependencies d on d.probe_key = i.probe_key
        join incidents dep on dep.probe_key = d.depends_on and dep.resolved_at is null
        where i.id = h.id
      ) as by
      from held h
    ), moved as (
      update incidents i set suppressed_by = next.by,
        next_reminder_at = case when next.by is null and pol.enabled and pol.reminder_minutes > 0
          then ${now.toISOString()}::timestamptz + make_interval(mins => pol.reminder_minutes)
          end
      from next, incidents cur
      cross join alert_settings g
      left join project_alerts pa on pa.project = cur.project
      cross join lateral (
        select coalesce(pa.enabled, g.enabled) as enabled,
          coalesce(pa.reminder_minutes, g.reminder_minutes) as reminder_minutes
      ) pol
      where i.id = next.id and cur.id = next.id
      returning i.*, next.by as still, pol.enabled, pol.reminder_minutes,
        coalesce(pa.targets, g.targets) as targets
    )
    select m.*, (select p.url from probes p where p.key = m.probe_key) as url
    from moved m where m.still is null order by m.id`.execute(trx);
  return rows;
}
