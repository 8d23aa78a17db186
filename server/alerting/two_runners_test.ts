/**
 * Two runners recording flapping probes side by side on PostgreSQL (the embedded database has one
 * connection, so nothing races there): every transition is decided exactly once. The runs'
 * outcomes are made up; the check replays each probe's recorded results, in the order they were
 * recorded, through the state rules, and compares with the incidents and notifications written.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import type { Outcome } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { freshDatabase } from "../testing/app.ts";
import { claimDue, recordRuns, syncSchedules } from "../runner/store.ts";

const PROBES = 200;
const RUNS_EACH = 12;
const FAILURE_THRESHOLD = 2;
const SUCCESS_THRESHOLD = 2;

/** Probe i fails in runs whose number, offset by i, falls in the first half of a period of 5. */
const outcomeOf = (i: number, run: number): Outcome => ((run + i) % 5 < 2 ? "down" : "up");

/** The transitions the rules give for a sequence of outcomes: downs and recoveries. */
function replay(outcomes: Outcome[]) {
  let state = "unknown";
  let fails = 0;
  let passes = 0;
  let downs = 0;
  let recoveries = 0;
  for (const outcome of outcomes) {
    const passing = outcome === "up" || outcome === "degraded";
    fails = passing ? 0 : fails + 1;
    passes = passing ? passes + 1 : 0;
    if (!passing && fails >= FAILURE_THRESHOLD && state !== "down") {
      state = "down";
      downs++;
    } else if (passing && (state !== "down" || passes >= SUCCESS_THRESHOLD)) {
      if (state === "down") recoveries++;
      state = outcome;
    }
  }
  return { downs, recoveries };
}

async function runner(db: Db, name: string, runs: Map<string, number>, index: Map<string, number>) {
  for (;;) {
    const now = Date.now();
    const claimed = await claimDue(db, {
      now,
      horizon: now,
      leaseUntil: now + 60_000,
      runner: name,
      limit: 25,
    });
    if (claimed.length === 0) {
      if ([...runs.values()].every((n) => n >= RUNS_EACH)) return;
      await new Promise((r) => setTimeout(r, 5));
      continue;
    }
    await recordRuns(
      db,
      name,
      claimed.map((c) => {
        const n = runs.get(c.key) ?? 0;
        const done = n >= RUNS_EACH;
        if (!done) runs.set(c.key, n + 1);
        return {
          key: c.key,
          due: c.due,
          // Done probes are put far in the future: they are not claimed again.
          nextDue: done ? now + 3_600_000 : now,
          result: done ? null : {
            startedAt: new Date(now),
            durationMs: 5,
            outcome: outcomeOf(index.get(c.key)!, n),
            httpStatus: 200,
            error: null,
            address: "127.0.0.1",
          },
        };
      }),
    );
  }
}

Deno.test({
  name: "two runners on flapping probes: each transition decided once [postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const handle = await freshDatabase("postgres");
    const db = handle.db;
    try {
      await db.updateTable("alert_settings").set({
        failure_threshold: FAILURE_THRESHOLD,
        success_threshold: SUCCESS_THRESHOLD,
        targets: json(["log"]),
      }).execute();
      await db.insertInto("projects").values({ name: "flap" }).execute();
      const keys = await db.insertInto("probes").values(
        Array.from({ length: PROBES }, (_, i) => ({
          project: "flap",
          probe_id: `p${i}`,
          url: `https://flap-${i}.example.com/`,
          method: "GET",
          headers: json({}),
        })),
      ).returning("key").execute();
      const index = new Map(keys.map(({ key }, i) => [String(key), i]));
      await syncSchedules(db, { now: Date.now() - 1000, intervalMs: 60_000 });
      // Shared counts: a probe's runs are numbered across both runners.
      const runs = new Map<string, number>();
      await Promise.all([runner(db, "r1", runs, index), runner(db, "r2", runs, index)]);

      const results = await sql<{ probe_key: string; outcome: Outcome; runner: string }>`
        select probe_key::text, outcome, runner from probe_results order by id`.execute(db);
      assert.equal(results.rows.length, PROBES * RUNS_EACH, "every run recorded once");
      assert.ok(new Set(results.rows.map((r) => r.runner)).size === 2, "both runners ran");
      const byProbe = new Map<string, Outcome[]>();
      for (const r of results.rows) {
        byProbe.set(r.probe_key, [...byProbe.get(r.probe_key) ?? [], r.outcome]);
      }

      const incidents = await db.selectFrom("incidents").select(["probe_key", "resolved_at"])
        .execute();
      const sent = await db.selectFrom("notifications").select(["event", "incident_id"]).execute();
      let downs = 0;
      let recoveries = 0;
      for (const [key, outcomes] of byProbe) {
        const expected = replay(outcomes);
        downs += expected.downs;
        recoveries += expected.recoveries;
        const mine = incidents.filter((i) => String(i.probe_key) === key);
        assert.equal(mine.length, expected.downs, `incidents of probe ${key}`);
        assert.equal(mine.filter((i) => i.resolved_at !== null).length, expected.recoveries);
      }
      assert.ok(downs > PROBES, `the probes flapped (${downs} downs)`);
      assert.equal(sent.filter((n) => n.event === "probe.down").length, downs);
      assert.equal(sent.filter((n) => n.event === "probe.recovered").length, recoveries);
      assert.equal(new Set(sent.map((n) => `${n.event}:${n.incident_id}`)).size, sent.length);
    } finally {
      await handle.close();
    }
  },
});
