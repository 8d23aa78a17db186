/**
 * Which runs' durations are latencies, for charts, percentiles, rollups and badges: the runs
 * that got an answer. An HTTP run got one when it has a status; a run of another kind (tcp://,
 * tls://, dns://) has none, and got one when it passed (up or degraded). A run that timed out
 * or was refused is not a latency: its duration is the time it waited.
 *
 * @module
 */
import { type RawBuilder, sql } from "kysely";
import type { Outcome } from "@probe/shared";

/** The condition on `probe_results` rows (of `table` when given, `x` for `x.http_status`). */
export function answeredRun(table?: string): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(table === undefined ? name : `${table}.${name}`);
  return sql<boolean>`(${column("http_status")} is not null or ${
    column("outcome")
  } in ('up', 'degraded'))`;
}

/** The same condition on a run as the runner has it. */
export const isAnsweredRun = (run: { httpStatus: number | null; outcome: Outcome }): boolean =>
  run.httpStatus !== null || run.outcome === "up" || run.outcome === "degraded";
