/**
 * What a remote runner posts, as the service reads it: the lease holder of a claim, the statuses
 * a post answers with, and a posted result as the store records it (run ids are the protocol's:
 * `parseRunId` in `shared/runner_protocol.ts`). Shared by `remote_runs.ts` (leased runs)
 * and `offline_runs.ts` (runs made during an outage).
 *
 * @module
 */
import type { ResultsPostAnswer, ResultsPostInput, RunRef } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import { json } from "../db/json.ts";
import { nextDue, offsetOf } from "../domain/schedule.ts";
import type { Completed } from "./store.ts";

/** The holder a claim's leases are taken by: the runner and the claim, so no two share one. */
export const holderOf = (runner: string, claim: string) => `${runner}#${claim}`;

export type RunStatus = ResultsPostAnswer["results"][number]["status"];

/** A posted result as the store records it, with the probe's next due time. */
export function completedOf(
  r: ResultsPostInput["results"][number],
  ref: RunRef,
  intervalMs: number,
  at: number,
): Completed {
  return {
    key: ref.key,
    due: ref.due,
    nextDue: nextDue({
      due: ref.due,
      now: at,
      offsetMs: offsetOf(ref.key, intervalMs),
      intervalMs,
    }),
    inMaintenance: ref.inMaintenance,
    result: {
      startedAt: new Date(r.started_at),
      durationMs: r.duration_ms,
      outcome: r.outcome,
      httpStatus: r.http_status,
      error: r.error,
      address: r.address,
      failedChecks: r.failed_checks,
    },
  };
}

/** The interval (ms) of each probe that still exists. */
export async function intervalsOf(
  trx: Db,
  keys: string[],
  defaultMs: number,
): Promise<Map<string, number>> {
  const rows = await sql<{ key: number | string; interval_seconds: number | null }>`
    select key, interval_seconds from probes
    where key in (select x.k from json_to_recordset(${json([...new Set(keys)].map((k) => ({ k })))})
      as x(k bigint))`.execute(trx);
  return new Map(
    rows.rows.map((r) => [
      String(r.key),
      r.interval_seconds === null ? defaultMs : r.interval_seconds * 1000,
    ]),
  );
}
