/**
 * Recording the runs a remote runner made while it could not reach the service
 * (docs/locations.md, "Outages"): it goes on running the probes it was running, on their grid,
 * and posts those results when the link is back, each named by a claim of its location and
 * marked `.o`.
 *
 * Such a run is recorded when its probe still runs at the location, its due time is on the
 * probe's grid, not in the future, at most a day old and not before the probe was made, its
 * result is dated as `posted_runs.ts` asks, and no result was recorded for that slot. The post
 * then takes the slot (the schedule row at that due time, held by the post) and records it with
 * the statement every runner uses, so states, streaks, incidents and notifications follow as
 * for any run. Otherwise it is `duplicate` (the slot was recorded) or `expired` (also when the
 * probe's project is disabled now). Whether it fell in a maintenance window is decided here, as
 * a claim decides it, whatever the runner said.
 *
 * A live lease wins: a run for a slot behind the schedule's (one nobody recorded) is recorded and
 * the schedule is left as it was, its slot and any claim's lease on it untouched; a run for the
 * schedule's slot or a later one takes it, unless another claim's lease on it is live (then it
 * is `expired`: that claim's runner is running it). So a claimed run's result is recorded
 * whatever another runner posted. A runner's own claim is taken by its run of that slot or a
 * later one (back from an outage, a runner does not run a slot twice: its outage run is the
 * claim's result), and a lease that ran out by any run, as a claim takes it over.
 *
 * The schedule rows are locked in key order, as every writer locks them; the runs of one probe
 * are recorded in due order, the n-th run of every probe together.
 *
 * @module
 */
import { sql } from "kysely";
import { type Db, withBudget } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { compareKeys } from "../storage/keys.ts";
import { offsetOf } from "../domain/schedule.ts";
import {
  completedOf,
  misdated,
  type PostedProbe,
  postedProbeOf,
  type PostedProbeRow,
  type PostedRuns,
  recordedSlots,
  type RunStatus,
} from "./posted_runs.ts";
import { recordRunsIn } from "./store.ts";

/** The oldest a run made during an outage may be and still be recorded. */
export const OFFLINE_MAX_AGE_MS = 25 * 3_600_000;
/** A due time at most this far ahead of the service's clock still counts as not in the future. */
const CLOCK_SLACK_MS = 5_000;

interface ScheduleRow {
  probe_key: string | number;
  next_due_at: Date;
  leased_by: string | null;
  lease_until: Date | null;
  due_by: Date | null;
}

/** Records what can be of `runs` (all offline), and says what became of each. */
export async function recordOffline(
  db: Db,
  { location, runner, runs, verdicts, at, lease }: PostedRuns,
): Promise<RunStatus[]> {
  const status: RunStatus[] = runs.map(() => "expired");
  const holder = `${runner}#offline`;
  await withBudget(db, "runner").transaction().execute(async (trx) => {
    const keys = [...new Set(runs.map((r) => r.ref.key))].sort(compareKeys);
    const { rows } = await sql<ScheduleRow>`
      select probe_key, next_due_at, leased_by, lease_until, due_by from probe_schedule
      where location = ${location} and probe_key in (
        select x.k from json_to_recordset(${json(keys.map((k) => ({ k })))}) as x(k bigint))
      order by probe_key for update`.execute(trx);
    const schedule = new Map(rows.map((r) => [String(r.probe_key), r]));
    const recorded = await recordedSlots(trx, location, runs.map((r) => r.ref));
    const { probes, disabled, maintenance } = await probesOf(
      trx,
      runs.map((r) => r.ref),
      { intervalMs: verdicts.intervalMs, lease },
    );
    const byKey = new Map<string, number[]>();
    const seen = new Set<string>();
    // The probes whose schedule slot a run of this post takes; the others' rows are put back.
    const taking = new Set<string>();
    runs.forEach(({ ref, result }, i) => {
      const slot = `${ref.key}@${ref.due}`;
      if (recorded.has(slot) || seen.has(slot)) return void (status[i] = "duplicate");
      seen.add(slot);
      const probe = probes.get(ref.key);
      const row = schedule.get(ref.key);
      if (probe === undefined || !row) return; // gone, or not run at this location
      if (disabled.has(ref.key)) return; // its project was disabled meanwhile
      if (ref.due > at + CLOCK_SLACK_MS || ref.due < at - OFFLINE_MAX_AGE_MS) return;
      const { intervalMs } = probe;
      if ((ref.due - offsetOf(ref.key, intervalMs)) % intervalMs !== 0) return; // off its grid
      if (misdated(result, ref, probe)) return;
      const takes = ref.due >= row.next_due_at.getTime();
      const othersLive = row.leased_by !== null && !row.leased_by.startsWith(`${runner}#`) &&
        row.lease_until !== null && row.lease_until.getTime() > at;
      if (takes && othersLive) return;
      if (takes) taking.add(ref.key);
      byKey.set(ref.key, [...(byKey.get(ref.key) ?? []), i]);
    });
    for (const list of byKey.values()) list.sort((a, b) => runs[a].ref.due - runs[b].ref.due);
    for (let round = 0;; round++) {
      const batch = [...byKey.values()].flatMap((list) => list[round] ?? []);
      if (batch.length === 0) break;
      // Each probe's slot taken by this post at the run's due time, then recorded as any run.
      await sql`
        update probe_schedule s
        set leased_by = ${holder}, lease_until = ${new Date(at + 60_000)}, next_due_at = x.d
        from json_to_recordset(${
        json(batch.map((i) => ({ k: runs[i].ref.key, d: new Date(runs[i].ref.due) })))
      }) as x(k bigint, d timestamptz)
        where s.probe_key = x.k and s.location = ${location}`.execute(trx);
      const completed = batch.map((i) => {
        const { ref: posted, result } = runs[i];
        // Whether the run fell in a maintenance window is the service's to say, as at a claim:
        // the runner could not know of a window made during the outage.
        const ref = { ...posted, inMaintenance: maintenance.has(`${posted.key}@${posted.due}`) };
        return completedOf(result, ref, probes.get(ref.key)!.intervalMs, at);
      });
      const done = await recordRunsIn(trx, holder, completed, location, verdicts);
      for (const i of batch) if (done.recorded.has(runs[i].ref.key)) status[i] = "recorded";
    }
    // Runs behind the schedule leave it as it was: its slot, and the lease a claim holds on it.
    const kept = [...byKey.keys()].filter((k) => !taking.has(k)).sort(compareKeys)
      .map((k) => ({ k, ...schedule.get(k)! }));
    if (kept.length > 0) {
      await sql`
        update probe_schedule s
        set next_due_at = x.next_due_at, leased_by = x.leased_by, lease_until = x.lease_until,
          due_by = x.due_by
        from json_to_recordset(${json(kept)})
          as x(k bigint, next_due_at timestamptz, leased_by text, lease_until timestamptz,
               due_by timestamptz)
        where s.probe_key = x.k and s.location = ${location}`.execute(trx);
    }
  });
  return status;
}

/**
 * Of these runs' probes, in one read: each that still exists (`postedProbeOf`), those whose
 * project is disabled now, and which runs (probe and due time) fall in a maintenance window of
 * their project, as a claim decides it (`claimDue`).
 */
async function probesOf(
  trx: Db,
  refs: { key: string; due: number }[],
  defaults: Parameters<typeof postedProbeOf>[1],
): Promise<{ probes: Map<string, PostedProbe>; disabled: Set<string>; maintenance: Set<string> }> {
  const { rows } = await sql<
    PostedProbeRow & { key: string; due: Date | string; disabled: boolean; in_maintenance: boolean }
  >`
    select x.k::text as key, x.d as due, p.interval_seconds, p.timeout_ms, p.created_at,
      pr.status = 'disabled' as disabled,
      exists (
        select 1 from maintenance_windows w
        where w.project = p.project and w.starts_at <= x.d and w.ends_at > x.d
      ) as in_maintenance
    from json_to_recordset(${
    json(refs.map((r) => ({ k: r.key, d: new Date(r.due).toISOString() })))
  }) as x(k bigint, d timestamptz)
    join probes p on p.key = x.k
    join projects pr on pr.name = p.project`.execute(trx);
  return {
    probes: new Map(rows.map((r) => [r.key, postedProbeOf(r, defaults)])),
    disabled: new Set(rows.filter((r) => r.disabled).map((r) => r.key)),
    maintenance: new Set(
      rows.filter((r) => r.in_maintenance).map((r) => `${r.key}@${new Date(r.due).getTime()}`),
    ),
  };
}
