/**
 * Flapping: a probe whose state changes more than the policy's `flap_changes` times within
 * `flap_minutes` is flapping. The change that makes it so sends `probe.flapping` instead of its
 * own notification; the changes after it are quiet (incidents still open and resolve as usual)
 * until the probe has kept one state for `flap_minutes`; then one notification says where it
 * settled (`probe.down` with its open incident, or `probe.recovered`), and counting starts
 * afresh. `flap_changes: 0` (the default) watches nothing.
 *
 * A change counts when it enters or leaves `down`, or moves between `up` and `degraded` where
 * the policy notifies `degraded`: the changes that would be told. The times are kept on the
 * probe's verdict row, counted in the transaction that decides the change with that row locked,
 * so with several runners and instances each change is counted once and `probe.flapping` is sent
 * once. The settling is claimed with `SKIP LOCKED` by the deliverer's poll (`settleFlapping`).
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import type { ProbeState } from "../storage/schema.ts";
import { enqueue, type Outgoing } from "./outbox/outbox.ts";
import { causeOf, displayLabel, eventOf, type IncidentRow } from "./incidents.ts";
import type { StateChange } from "./states.ts";

/** A state change with the policy's flapping settings. */
export interface Counted {
  change: StateChange;
  flapChanges: number;
  flapMinutes: number;
}

/** Whether a change is one flapping counts (see the module's note). */
export function countsAsFlap(c: Pick<StateChange, "from" | "to" | "policy">): boolean {
  if ((c.from === "down") !== (c.to === "down")) return c.to !== "unknown";
  return c.policy.notifyDegraded &&
    ((c.from === "up" && c.to === "degraded") || (c.from === "degraded" && c.to === "up"));
}

interface FlapRow {
  probe_key: number | string;
  flap_times: string[] | null;
  flapping_since: Date | string | null;
}

/**
 * Counts these changes on their probes' verdict rows (locked by the caller) and returns the keys
 * whose notifications are held back (flapping), and the changes that started flapping (to be
 * told with `notifyFlapping` once their incidents are written).
 */
export async function countFlaps(
  trx: Db,
  counted: readonly Counted[],
): Promise<{ quiet: Set<string>; started: StateChange[] }> {
  const quiet = new Set<string>();
  const started: StateChange[] = [];
  const moving = counted.filter((x) => countsAsFlap(x.change));
  if (moving.length === 0) return { quiet, started };
  const { rows } = await sql<FlapRow>`
    select probe_key, flap_times, flapping_since from probe_verdicts
    where probe_key in (select x.k from json_to_recordset(${
    json(moving.map((x) => ({ k: x.change.key })))
  }) as x(k bigint))`.execute(trx);
  const byKey = new Map(rows.map((r) => [String(r.probe_key), r]));
  const updates = moving.map(({ change: c, flapChanges, flapMinutes }) => {
    const row = byKey.get(c.key);
    const at = c.startedAt.getTime();
    if (flapChanges === 0 || !row) return { k: c.key, t: null, since: null, settle: null };
    const windowStart = at - flapMinutes * 60_000;
    const times = [...(row.flap_times ?? []), c.startedAt.toISOString()]
      .filter((t) => Date.parse(t) > windowStart)
      .slice(-(flapChanges + 1));
    const settle = new Date(at + flapMinutes * 60_000).toISOString();
    if (row.flapping_since !== null) {
      quiet.add(c.key);
      return { k: c.key, t: times, since: new Date(row.flapping_since).toISOString(), settle };
    }
    if (times.length > flapChanges) {
      quiet.add(c.key);
      started.push(c);
      return { k: c.key, t: times, since: c.startedAt.toISOString(), settle };
    }
    return { k: c.key, t: times, since: null, settle: null };
  });
  await sql`
    update probe_verdicts v
    set flap_times = x.t, flapping_since = x.since, flap_settle_at = x.settle
    from json_to_recordset(${json(updates)})
      as x(k bigint, t json, since timestamptz, settle timestamptz)
    where v.probe_key = x.k`.execute(trx);
  return { quiet, started };
}

/** The open incident of each of these probes, by key. */
async function openIncidents(trx: Db, keys: readonly string[]) {
  if (keys.length === 0) return new Map<string, IncidentRow>();
  const { rows } = await sql<IncidentRow>`
    select * from incidents where resolved_at is null and probe_key in (
      select x.k from json_to_recordset(${json(keys.map((k) => ({ k })))}) as x(k bigint))`
    .execute(trx);
  return new Map(rows.map((r) => [String(r.probe_key), r]));
}

/** Tells the targets that these probes started flapping: `probe.flapping`, once each. */
export async function notifyFlapping(
  trx: Db,
  started: readonly StateChange[],
  now: Date,
): Promise<number> {
  const told = started.filter((c) => c.policy.enabled);
  if (told.length === 0) return 0;
  const open = await openIncidents(trx, told.map((c) => c.key));
  return await enqueue(
    trx,
    told.map((c): Outgoing => {
      const incident = open.get(c.key) ?? null;
      return {
        event: eventOf("probe.flapping", now, {
          incident,
          project: c.project,
          probeId: c.probeId,
          label: displayLabel(c.label, c.url),
          url: c.url,
          state: c.to,
          cause: c.to === "down" ? incident?.cause ?? causeOf(c) : null,
          run: c,
          locations: c.locations ?? null,
        }),
        targets: c.policy.targets,
        incidentId: incident ? String(incident.id) : null,
      };
    }),
  );
}

interface SettledRow {
  probe_key: number | string;
  state: ProbeState;
  project: string;
  probe_id: string;
  url: string;
  label: string | null;
  enabled: boolean;
  targets: string[];
  notify_recovered: boolean;
}

/**
 * Ends the flapping of probes that kept one state for `flap_minutes` (their settle time has come),
 * up to `limit` of them, each told once where it settled: `probe.down` with its open incident
 * (unless a dependency's being down holds it back), or `probe.recovered` (when the policy tells
 * recoveries) with its last incident. Claimed with `SKIP LOCKED`: instances side by side settle
 * each probe once. Returns how many notifications were written.
 */
export function settleFlapping(db: Db, now: Date, limit = 100): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<SettledRow>`
      with due as (
        select probe_key from probe_verdicts
        where flap_settle_at is not null and flap_settle_at <= ${now.toISOString()}
        order by flap_settle_at limit ${limit}
        for update skip locked
      ), cleared as (
        update probe_verdicts v
        set flapping_since = null, flap_settle_at = null, flap_times = null
        from due where v.probe_key = due.probe_key
        returning v.probe_key, v.state
      )
      select c.probe_key, c.state, p.project, p.probe_id, p.url, p.label,
        coalesce(pa.enabled, g.enabled) as enabled, coalesce(pa.targets, g.targets) as targets,
        coalesce(pa.notify_recovered, g.notify_recovered) as notify_recovered
      from cleared c join probes p on p.key = c.probe_key
      cross join alert_settings g
      left join project_alerts pa on pa.project = p.project
      order by c.probe_key`.execute(trx);
    const told = rows.filter((r) =>
      r.enabled && (r.state === "down" || (r.notify_recovered && r.state !== "unknown"))
    );
    if (told.length === 0) return 0;
    const keys = sql`select x.k from json_to_recordset(${
      json(told.map((r) => ({ k: String(r.probe_key) })))
    }) as x(k bigint)`;
    // Their open incidents held first, and read in the next statement: a dependency recovering
    // meanwhile either releases them before (then they are told here) or after this settling
    // (and, the probe no longer flapping, tells them itself): told once either way.
    await sql`select id from incidents where resolved_at is null and probe_key in (${keys})
      order by id for update`.execute(trx);
    const { rows: incidents } = await sql<IncidentRow & { suppressed_by: string | null }>`
      select distinct on (probe_key) * from incidents
      where probe_key in (${keys})
      order by probe_key, id desc`.execute(trx);
    const last = new Map(incidents.map((i) => [String(i.probe_key), i]));
    return await enqueue(
      trx,
      told.flatMap((r): Outgoing[] => {
        const incident = last.get(String(r.probe_key)) ?? null;
        const down = r.state === "down";
        if (down && (!incident || incident.resolved_at !== null || incident.suppressed_by)) {
          return [];
        }
        return [{
          event: eventOf(down ? "probe.down" : "probe.recovered", now, {
            incident,
            project: r.project,
            probeId: r.probe_id,
            label: displayLabel(r.label, r.url),
            url: r.url,
            state: r.state,
            cause: incident?.cause ?? null,
            run: { error: incident?.last_error ?? null },
          }),
          targets: r.targets,
          incidentId: incident ? String(incident.id) : null,
        }];
      }),
    );
  });
}
