/**
 * A probe has one schedule row per location it runs from. After a write that changes
 * where probes run (a probe's `locations`, a project's `default_locations`), the rows of
 * locations they no longer run from are removed here; the rows of new ones are added by the
 * runners (`syncSchedules`, every 2 s), due at once, as a new probe's are.
 *
 * Called after the write has committed, in a statement of its own that locks schedule rows in
 * key order (as the runners and a project delete do): a transaction holding the probe row and
 * waiting for schedule rows could deadlock with a runner recording a run.
 *
 * @module
 */
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { effectiveLocationsSql } from "./locations.ts";

export type ProbeScope = { keys: readonly string[] } | { project: string };

const probesOf = (scope: ProbeScope) =>
  "keys" in scope
    ? sql`p.key in (select x.k from json_to_recordset(${
      json(scope.keys.map((k) => ({ k })))
    }) as x(k bigint))`
    : sql`p.project = ${scope.project}`;

/** Removes the schedule rows of locations the probes no longer run from. */
export async function syncProbeLocations(db: Db, scope: ProbeScope): Promise<void> {
  await sql`
      with locked as (
        select s.probe_key, s.location from probe_schedule s
        join probes p on p.key = s.probe_key
        join projects pr on pr.name = p.project
        where ${probesOf(scope)}
          and not (s.location = any(${effectiveLocationsSql("p", "pr")}))
        order by s.probe_key, s.location for update of s
      )
      delete from probe_schedule s using locked
      where s.probe_key = locked.probe_key and s.location = locked.location`.execute(db);
}
