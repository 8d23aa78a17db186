/**
 * Verdicts by quorum, so one location's bad network does not page anyone: each (probe, location)
 * keeps its own state and streaks on its schedule row (`states.ts`, by the policy's thresholds);
 * the probe's state is decided from them:
 *
 * - a location counts as `unknown` when it has no result for three of the probe's intervals
 *   (stale: its runners stopped, or cannot reach the service), whatever its row says;
 * - the probe is `down` when at least `location_quorum` of its locations are down (`majority`:
 *   more than half; a number above its count of locations: all of them);
 * - else `unknown` when its unknown locations could still make the quorum (or it has none known);
 * - else `degraded` when a location is degraded, else `up`.
 *
 * The decision runs in the transaction that settled the runs, for each probe they touched, with
 * the probe's verdict row locked (after the schedule rows, in key order): with several runners
 * and instances each transition is decided once. Entering `down` opens the incident, leaving it
 * for `up` or `degraded` resolves it (`applyStateChanges`); leaving it for `unknown` (locations
 * gone stale) keeps the incident open, and the incident says which locations are stale. A sweep
 * (`sweepStale`) decides again the probes whose location turned stale since.
 *
 * @module
 */
import { ALERT_POLICY_FIELDS, type FailedCheck, type LocationStates } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { compareKeys } from "../storage/keys.ts";
import type { ProbeState } from "../storage/schema.ts";
import { effectivePolicy } from "./policy_sql.ts";
import { applyStateChanges } from "./incidents.ts";
import { countFlaps, notifyFlapping } from "./flapping.ts";
import type { StateChange } from "./states.ts";

/** A location with no result for this many of the probe's intervals counts as unknown. */
export const STALE_INTERVALS = 3;

/** The run that asked for the decision (none for the sweep). */
export interface Trigger {
  startedAt: Date;
  error: string | null;
  httpStatus?: number | null;
  failedChecks?: FailedCheck[] | null;
  passing: boolean;
}

export interface VerdictOptions {
  now: Date;
  /** The built-in location's name (`RUNNER_LOCATION`), as messages name it. */
  localName: string;
  /** The service-wide interval (ms), for probes without their own. */
  intervalMs: number;
  triggers?: ReadonlyMap<string, Trigger>;
}

interface LocationRow {
  probe_key: number | string;
  location: string;
  state: ProbeState;
  last_run_at: Date | string | null;
  fail_streak: number;
  interval_seconds: number | null;
  project: string;
  probe_id: string;
  url: string;
  label: string | null;
  enabled: boolean;
  targets: string[];
  reminder_minutes: number;
  notify_degraded: boolean;
  notify_recovered: boolean;
  location_quorum: number;
  flap_changes: number;
  flap_minutes: number;
}

const keyRows = (keys: readonly string[]) => json(keys.map((k) => ({ k })));

/** The verdict of one probe from its locations' rows. */
export function verdictOf(
  rows: readonly Pick<LocationRow, "location" | "state" | "last_run_at">[],
  { quorum, staleBefore, shown }: {
    /** 0: a majority. */
    quorum: number;
    /** Results older than this (ms) are stale. */
    staleBefore: number;
    shown: (stored: string) => string;
  },
): { state: ProbeState; locations: LocationStates } {
  const locations: LocationStates = { down: [], up: [], degraded: [], unknown: [], stale: [] };
  for (const r of rows) {
    const name = shown(r.location);
    const fresh = r.last_run_at !== null && new Date(r.last_run_at).getTime() >= staleBefore;
    if (!fresh && r.last_run_at !== null) locations.stale.push(name);
    if (!fresh || r.state === "unknown") locations.unknown.push(name);
    else locations[r.state].push(name);
  }
  const n = rows.length;
  const needed = quorum === 0 ? Math.floor(n / 2) + 1 : Math.min(quorum, n);
  const down = locations.down.length;
  const known = down + locations.up.length + locations.degraded.length;
  const state: ProbeState = n === 0 || known === 0
    ? "unknown"
    : down >= needed
    ? "down"
    : down + locations.unknown.length >= needed
    ? "unknown"
    : locations.degraded.length > 0
    ? "degraded"
    : "up";
  for (const list of Object.values(locations)) list.sort();
  return { state, locations };
}

/**
 * Decides the state of these probes from their locations' rows (see the module's note), and
 * applies what the changes mean (incidents, notifications). Call in the transaction that moved
 * the rows, after them.
 */
export async function decideVerdicts(
  trx: Db,
  keys: readonly string[],
  options: VerdictOptions,
): Promise<void> {
  const unique = [...new Set(keys)].sort(compareKeys);
  if (unique.length === 0) return;
  await sql`
    insert into probe_verdicts (probe_key)
    select x.k from json_to_recordset(${keyRows(unique)}) as x(k bigint)
    where exists (select 1 from probes p where p.key = x.k)
    order by x.k on conflict do nothing`.execute(trx);
  const { rows: held } = await sql<{ probe_key: number | string; state: ProbeState }>`
    select probe_key, state from probe_verdicts
    where probe_key in (select x.k from json_to_recordset(${keyRows(unique)}) as x(k bigint))
    order by probe_key for update`.execute(trx);
  if (held.length === 0) return;
  const { rows } = await sql<LocationRow>`
    select s.probe_key, s.location, s.state, s.last_run_at, s.fail_streak, p.interval_seconds,
      p.project, p.probe_id, p.url, p.label, ${effectivePolicy(...ALERT_POLICY_FIELDS)}
    from probe_schedule s
    join probes p on p.key = s.probe_key
    cross join alert_settings g
    left join project_alerts pa on pa.project = p.project
    where s.probe_key in (select x.k from json_to_recordset(${keyRows(unique)}) as x(k bigint))
    order by s.probe_key, s.location`.execute(trx);
  const { rows: open } = await sql<{ probe_key: number | string }>`
    select probe_key from incidents where resolved_at is null
      and probe_key in (select x.k from json_to_recordset(${keyRows(unique)}) as x(k bigint))`
    .execute(trx);
  const byKey = Map.groupBy(rows, (r) => String(r.probe_key));
  const openKeys = new Set(open.map((o) => String(o.probe_key)));
  const decided = held.map((h) =>
    decideOne(String(h.probe_key), h.state, byKey.get(String(h.probe_key)) ?? [], options)
  );
  await store(trx, decided);
  const changes = decided.flatMap((d) => changeOf(d, openKeys.has(d.key), options));
  const flaps = await countFlaps(
    trx,
    changes.map((change) => {
      const r = byKey.get(change.key)![0];
      return { change, flapChanges: r.flap_changes, flapMinutes: r.flap_minutes };
    }),
  );
  for (const c of changes) c.quiet = flaps.quiet.has(c.key);
  await applyStateChanges(trx, changes, options.now);
  await notifyFlapping(trx, flaps.started, options.now);
  await sql`
    update incidents i set locations = x.l
    from json_to_recordset(${json(decided.map((d) => ({ k: d.key, l: d.locations })))})
      as x(k bigint, l json)
    where i.probe_key = x.k and i.resolved_at is null`.execute(trx);
}

interface Decided {
  key: string;
  from: ProbeState;
  to: ProbeState;
  locations: LocationStates;
  /** When one of the fresh locations turns stale; null when none is fresh. */
  staleAt: number | null;
  rows: LocationRow[];
  /** As of when it was decided: the triggering run's start, or now. */
  at: Date;
}

function decideOne(
  key: string,
  from: ProbeState,
  rows: LocationRow[],
  { now: decidedAt, localName, intervalMs, triggers }: VerdictOptions,
): Decided {
  // Judged as of the run that asked (a result delivered late is judged as of its own start),
  // or of now for the sweep.
  const now = triggers?.get(key)?.startedAt ?? decidedAt;
  const interval = (rows[0]?.interval_seconds ?? null) === null
    ? intervalMs
    : rows[0].interval_seconds! * 1000;
  const staleMs = STALE_INTERVALS * interval;
  const { state, locations } = verdictOf(rows, {
    quorum: rows[0]?.location_quorum ?? 0,
    staleBefore: now.getTime() - staleMs,
    shown: (stored) => (stored === "" ? localName : stored),
  });
  const fresh = rows.flatMap((r) => {
    const at = r.last_run_at === null ? null : new Date(r.last_run_at).getTime() + staleMs;
    return at !== null && at > now.getTime() ? [at] : [];
  });
  return {
    key,
    from,
    to: state,
    locations,
    staleAt: fresh.length === 0 ? null : Math.min(...fresh),
    rows,
    at: now,
  };
}

async function store(trx: Db, decided: readonly Decided[]): Promise<void> {
  const rows = decided.map((d) => ({
    k: d.key,
    s: d.to,
    since: d.to !== d.from ? d.at.toISOString() : null,
    st: d.staleAt === null ? null : new Date(d.staleAt).toISOString(),
    l: d.locations,
  }));
  await sql`
    update probe_verdicts v
    set state = x.s, state_since = coalesce(x.since, v.state_since),
        stale_at = x.st, locations = x.l
    from json_to_recordset(${json(rows)})
      as x(k bigint, s text, since timestamptz, st timestamptz, l json)
    where v.probe_key = x.k`.execute(trx);
}

/**
 * What a decision means for alerting, as `applyStateChanges` reads it. Leaving `down` for
 * `unknown` (stale locations) keeps the incident: no change; leaving `unknown` for `up` or
 * `degraded` with an incident still open resolves it, as leaving `down` does.
 */
function changeOf(d: Decided, incidentOpen: boolean, o: VerdictOptions): StateChange[] {
  if (d.rows.length === 0) return [];
  if (d.from === "down" && d.to === "unknown") return [];
  const from: ProbeState = d.from === "unknown" && incidentOpen && d.to !== "unknown"
    ? "down"
    : d.from;
  const trigger = o.triggers?.get(d.key);
  const r = d.rows[0];
  const failing = d.rows.filter((x) => x.state === "down");
  return [{
    key: d.key,
    from,
    to: d.to,
    passing: trigger?.passing ?? d.to !== "down",
    startedAt: trigger?.startedAt ?? o.now,
    error: trigger?.error ?? null,
    httpStatus: trigger?.httpStatus ?? null,
    failedChecks: trigger?.failedChecks ?? null,
    failStreak: Math.max(0, ...failing.map((x) => x.fail_streak)),
    project: r.project,
    probeId: r.probe_id,
    url: r.url,
    label: r.label,
    locations: d.locations,
    policy: {
      enabled: r.enabled,
      targets: r.targets,
      reminderMinutes: r.reminder_minutes,
      notifyDegraded: r.notify_degraded,
      notifyRecovered: r.notify_recovered,
    },
  }];
}

/**
 * Decides again the probes one of whose locations turned stale since their last decision, up
 * to `limit` of them; claimed with `SKIP LOCKED`, so runners sweeping side by side share them.
 * Returns how many were decided.
 */
export function sweepStale(
  db: Db,
  options: Omit<VerdictOptions, "triggers">,
  limit = 500,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ probe_key: number | string }>`
      select probe_key from probe_verdicts
      where stale_at is not null and stale_at <= ${options.now.toISOString()}
      order by probe_key limit ${limit} for update skip locked`.execute(trx);
    if (rows.length === 0) return 0;
    await decideVerdicts(trx, rows.map((r) => String(r.probe_key)), options);
    return rows.length;
  });
}

/** Forgets the verdicts of deleted probes (in the delete's transaction). */
export async function forgetVerdicts(
  trx: Db,
  where: { keys: readonly string[] } | { project: string },
): Promise<void> {
  const keys = "keys" in where
    ? sql`select x.k from json_to_recordset(${keyRows(where.keys)}) as x(k bigint)`
    : sql`select key from probes where project = ${where.project}`;
  await sql`delete from probe_verdicts where probe_key in (${keys})`.execute(trx);
}
