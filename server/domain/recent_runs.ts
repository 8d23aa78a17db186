/**
 * The overview's row of last runs per probe: the outcome of each of its latest runs (every
 * location's, oldest first, a run in a maintenance window as `maintenance`) and the newest run's
 * duration, so the dashboard shows a probe's state at a glance. One statement for all the probes:
 * each probe's newest runs of the last 24 hours by its `(probe_key, started_at desc)` index.
 *
 * @module
 */
import type { RecentRun } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { among, type Visible } from "./visible.ts";

/** Runs per probe in the overview's row of last runs. */
export const RECENT_RUNS = 20;
/** How far back the row reaches: only the partitions of the last day are read. */
const RECENT_SPAN_MS = 86_400_000;

export interface RecentRuns {
  runs: RecentRun[];
  /** The newest run's duration (ms). */
  lastDurationMs: number;
}

/**
 * Per probe key, its last runs of the 24 hours before `now` (at most `RECENT_RUNS`), oldest
 * first; a probe without runs in them is absent. Of the probes of `only`'s projects, or of all.
 */
export async function recentRuns(
  db: Db,
  only: Visible,
  now: number,
): Promise<Map<string, RecentRuns>> {
  const scope = among("p.project", only);
  const { rows } = await sql<{
    probe_key: string | number;
    outcome: RecentRun;
    duration_ms: number;
  }>`
    select p.key as probe_key, r.duration_ms,
      case when r.in_maintenance then 'maintenance' else r.outcome end as outcome
    from probes p
    cross join lateral (
      select x.outcome, x.in_maintenance, x.duration_ms, x.started_at, x.id
      from probe_results x
      where x.probe_key = p.key and x.started_at > ${new Date(now - RECENT_SPAN_MS)}
        and x.started_at <= ${new Date(now)}
      order by x.started_at desc, x.id desc
      limit ${RECENT_RUNS}
    ) r
    where ${scope}
    order by p.key, r.started_at desc, r.id desc`.execute(db);
  const byProbe = new Map<string, RecentRuns>();
  for (const row of rows) {
    const key = String(row.probe_key);
    const seen = byProbe.get(key);
    if (seen) seen.runs.unshift(row.outcome);
    else byProbe.set(key, { runs: [row.outcome], lastDurationMs: row.duration_ms });
  }
  return byProbe;
}
