/**
 * Runs with chosen outcomes for alerting tests: probes inserted straight into a project, and one
 * run of each due probe recorded through the runner's own store (`claimDue`, `recordRuns`), at a
 * time the test chooses (a fake clock).
 *
 * @module
 */
import type { Outcome } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { claimDue, recordRuns, syncSchedules } from "../runner/store.ts";

const RUNNER = "test-runner";

/** A probe of `project` (created when missing), scheduled from `at`; returns its key. */
export async function insertProbe(db: Db, project: string, probeId: string, at: number) {
  await db.insertInto("projects").values({ name: project }).onConflict((oc) => oc.doNothing())
    .execute();
  const { key } = await db.insertInto("probes").values({
    project,
    probe_id: probeId,
    url: `https://${probeId}.example.com/health`,
    method: "GET",
    headers: json({}),
  }).returning("key").executeTakeFirstOrThrow();
  await syncSchedules(db, { now: at, intervalMs: 60_000 });
  return String(key);
}

/** One run of each probe named (by key) with its outcome, at `at`; others due are not run. */
export async function runAt(db: Db, outcomes: Record<string, Outcome>, at: number) {
  const claimed = await claimDue(db, {
    now: at,
    horizon: at,
    leaseUntil: at + 60_000,
    runner: RUNNER,
    limit: 1000,
  });
  await recordRuns(
    db,
    RUNNER,
    claimed.map((c) => {
      const outcome = outcomes[c.key];
      return {
        key: c.key,
        due: c.due,
        nextDue: at + 1,
        inMaintenance: c.inMaintenance,
        result: outcome === undefined ? null : {
          startedAt: new Date(at),
          durationMs: 10,
          outcome,
          httpStatus: outcome === "down" ? 500 : 200,
          error: outcome === "down" ? "HTTP 500" : null,
          address: "127.0.0.1",
          failedChecks: null,
        },
      };
    }),
  );
}

/** The notifications written so far: event, probe and state, oldest first. */
export async function told(db: Db) {
  const rows = await db.selectFrom("notifications").select(["event", "payload", "incident_id"])
    .orderBy("created_at").orderBy("id").execute();
  return rows.map((r) => {
    const data = (r.payload as { data: { probe_id: string; state: string } }).data;
    return [r.event, data.probe_id, data.state];
  });
}
