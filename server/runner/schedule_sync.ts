/**
 * Schedule rows kept in step with probes, cheaply. `syncSchedules` finds the probe and location
 * pairs without a row with an anti-join over every probe: 0.8 s of PostgreSQL at 100,000 probes,
 * asked every 2 s by each runner and by the service for remote locations, and almost always
 * finding nothing. A `ScheduleSync` first reads a fingerprint of what the rows follow from (each
 * probe's key and `locations`, each project's `default_locations`: counts and sums of hashes, one
 * plain scan of each table) and runs the anti-join only when that changed, and at least every
 * `fullEveryMs` whatever it reads.
 *
 * The fingerprint is read before the anti-join, so in an older snapshot: a change committed
 * between the two is seen by the anti-join and also changes the next fingerprint. At worst one
 * anti-join too many, never a change left unseen. (A sum of hashes can collide; the periodic
 * anti-join covers that, and rows removed by hand.)
 *
 * @module
 */
import { sql } from "kysely";
import { type Db, withBudget } from "../storage/database.ts";
import { syncSchedules } from "./store.ts";

export interface ScheduleSync {
  /** Adds the schedule rows missing at `now` (due at once); returns how many. */
  sync(now: number): Promise<number>;
}

/** What schedule rows follow from, summed up in one line. */
export async function scheduleFingerprint(database: Db): Promise<string> {
  const { rows: [row] } = await sql<{ probes: string; projects: string }>`
    select
      (select count(*) || ':' || coalesce(sum(hashtext(key::text || '|' ||
         coalesce(locations::text, '-'))), 0) from probes) as probes,
      (select count(*) || ':' || coalesce(sum(hashtext(name || '|' ||
         coalesce(default_locations::text, '-'))), 0) from projects) as projects`
    .execute(withBudget(database, "runner"));
  return `${row.probes}/${row.projects}`;
}

export function createScheduleSync(
  db: Db,
  { intervalMs, fullEveryMs = 5 * 60_000 }: {
    /** The service-wide interval: for probes without their own (`interval_seconds`). */
    intervalMs: number;
    /** The anti-join runs at least this often, even when the fingerprint did not change. */
    fullEveryMs?: number;
  },
): ScheduleSync {
  let last: string | null = null;
  let fullAt = -Infinity;
  return {
    async sync(now) {
      const print = await scheduleFingerprint(db);
      if (print === last && now - fullAt < fullEveryMs) return 0;
      const added = await syncSchedules(db, { now, intervalMs });
      last = print;
      fullAt = now;
      return added;
    },
  };
}
