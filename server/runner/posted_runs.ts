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
import type { Completed, Verdicts } from "./store.ts";

/** The holder a claim's leases are taken by: the runner and the claim, so no two share one. */
export const holderOf = (runner: string, claim: string) => `${runner}#${claim}`;

export type RunStatus = ResultsPostAnswer["results"][number]["status"];

/** What recording a post's runs takes: whose runs, which, and the service's clock. */
export interface PostedRuns {
  location: string;
  /** The posting runner's name: its leases are held as `<runner>#<claim>`. */
  runner: string;
  runs: { ref: RunRef; result: ResultsPostInput["results"][number] }[];
  verdicts: Verdicts;
  at: number;
}

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

/**
 * Which of these slots (probe and due time) have a result at `location`: recorded by `holder`
 * when given (a claim's own), else by any runner.
 */
export async function recordedSlots(
  trx: Db,
  location: string,
  refs: RunRef[],
  holder?: string,
): Promise<Set<string>> {
  if (refs.length === 0) return new Set();
  const { rows } = await sql<{ probe_key: number | string; due_at: Date | string }>`
    select r.probe_key, r.due_at from probe_results r
    join json_to_recordset(${
    json(refs.map((r) => ({ k: r.key, d: new Date(r.due).toISOString() })))
  })
      as x(k bigint, d timestamptz) on r.probe_key = x.k and r.due_at = x.d
    where r.location = ${location} and ${
    holder === undefined ? sql`true` : sql`r.runner = ${holder}`
  }
      and r.started_at >= x.d - interval '1 day'`.execute(trx);
  return new Set(rows.map((r) => `${r.probe_key}@${new Date(r.due_at).getTime()}`));
}
