/**
 * The runner's side of the I'm alive reports: its figures in the report's shape.
 *
 * @module
 */
import type { IamAliveRunnerFigures } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { runnerFigures } from "./figures.ts";

/** Runs, failures and slip since a time, for a report (`since` within the results' retention). */
export function reportRunnerFigures(
  db: Db,
): (since: Date) => Promise<IamAliveRunnerFigures> {
  return async (since) => {
    const f = await runnerFigures({ db, since });
    return {
      runs: f.runs,
      failures: f.failures,
      up: f.outcomes.up,
      degraded: f.outcomes.degraded,
      down: f.outcomes.down,
      blocked: f.outcomes.blocked,
      ...(f.slip && {
        slip_p50_ms: f.slip.p50,
        slip_p99_ms: f.slip.p99,
        slip_max_ms: f.slip.max,
      }),
      probes_scheduled: f.probes.scheduled,
      probes_overdue: f.probes.overdue,
    };
  };
}
