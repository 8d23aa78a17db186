/**
 * How far behind the schedule is, for every runner sharing the database: read by the overview
 * and by `/metrics`, and the threshold runners use for their own overload flag.
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";

/** Behind by this much or more, the schedule (or a runner) counts as overloaded. */
export const OVERLOAD_LAG_MS = 5000;

/**
 * How far behind the schedule is at `at`, for every runner sharing the database (seconds): the
 * age of the oldest run that is due and that no runner has claimed, 0 when there is none.
 * Runners claim what is due a second ahead, oldest first, up to what they can start in time
 * (docs/runner.md, "Claim window"): a due run left unclaimed means they cannot keep up (or no
 * runner runs). It reads the schedule's due-time index from the oldest row, so it costs little.
 * Runs claimed and queued in a runner are not counted: each runner's own figure
 * (`runner_lag_seconds`) covers them.
 */
export async function scheduleLag(
  { db, at = new Date(), location = "" }: {
    db: Db;
    at?: Date;
    /** The location whose schedule to read: '' (the default) for the built-in one. */
    location?: string;
  },
): Promise<number> {
  const { rows: [row] } = await sql<{ oldest: Date | string | null }>`
    select min(next_due_at) as oldest from probe_schedule
    where location = ${location} and next_due_at <= ${at} and (lease_until is null or lease_until < ${at})`
    .execute(db);
  if (!row?.oldest) return 0;
  return Math.max(0, (at.getTime() - new Date(row.oldest).getTime()) / 1000);
}
