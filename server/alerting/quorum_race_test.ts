/**
 * Two locations of the same probes recorded side by side on PostgreSQL (the embedded database
 * has one connection, so nothing races there): with `location_quorum` 2 of 2, the probe goes
 * down only once both are down, whichever records last, and each transition is decided once.
 * Without the verdict row's lock both transactions could each see the other location as it was
 * before, and neither would open the incident.
 */
import assert from "node:assert/strict";
import { json } from "../storage/json.ts";
import type { Db } from "../storage/database.ts";
import { freshDatabase } from "../testing/app.ts";
import { claimDue, recordRuns, syncSchedules } from "../runner/store.ts";

const PROBES = 100;

/** One failing run of every due probe at `location`, recorded by `runner`. */
async function failAll(db: Db, location: string, runner: string, at: number) {
  const claimed = await claimDue(db, {
    location,
    now: at,
    horizon: at,
    leaseUntil: at + 60_000,
    runner,
    limit: 1000,
  });
  assert.equal(claimed.length, PROBES);
  await recordRuns(
    db,
    runner,
    claimed.map((c) => ({
      key: c.key,
      due: c.due,
      nextDue: at + 1,
      result: {
        startedAt: new Date(at),
        durationMs: 5,
        outcome: "down",
        httpStatus: 503,
        error: "HTTP 503",
        address: "127.0.0.1",
      },
    })),
    location,
  );
}

Deno.test({
  name: "two locations recorded side by side: 2 of 2 down opens each incident once [postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const handle = await freshDatabase("postgres");
    const db = handle.db;
    try {
      await db.updateTable("alert_settings").set({
        failure_threshold: 1,
        targets: json(["log"]),
        location_quorum: 2,
      }).execute();
      await db.insertInto("locations").values({ name: "eu", token_sha256: "x" }).execute();
      await db.insertInto("projects").values({ name: "race" }).execute();
      await db.insertInto("probes").values(
        Array.from({ length: PROBES }, (_, i) => ({
          project: "race",
          probe_id: `p${i}`,
          url: `https://race-${i}.example.com/`,
          method: "GET",
          headers: json({}),
          locations: ["", "eu"],
        })),
      ).execute();
      const at = Date.now() - 1000;
      await syncSchedules(db, { now: at, intervalMs: 60_000 });
      await Promise.all([failAll(db, "", "local-1", at), failAll(db, "eu", "eu-1", at)]);
      const incidents = await db.selectFrom("incidents").select(["probe_key", "locations"])
        .execute();
      assert.equal(incidents.length, PROBES, "every probe down once both are");
      assert.equal(new Set(incidents.map((i) => String(i.probe_key))).size, PROBES);
      for (const i of incidents) {
        assert.deepEqual((i.locations as { down: string[] }).down, ["eu", "local"]);
      }
      const sent = await db.selectFrom("notifications").select("event").execute();
      assert.equal(sent.filter((n) => n.event === "probe.down").length, PROBES);
      const verdicts = await db.selectFrom("probe_verdicts").select("state").execute();
      assert.ok(verdicts.length === PROBES && verdicts.every((v) => v.state === "down"));
    } finally {
      await handle.close();
    }
  },
});
