/**
 * Flapping, on a fake clock, on each database: runs recorded through the runner's store with
 * chosen outcomes (thresholds of 1, so each run moves the state), the policy's `flap_changes` 3
 * within `flap_minutes` 10.
 */
import assert from "node:assert/strict";
import type { Outcome } from "@probe/shared";
import { backends, freshDatabase } from "../testing/app.ts";
import { settleFlapping } from "./flapping.ts";
import { publicStatusPage } from "../domain/status_pages.ts";
import { insertProbe, runAt, told } from "../testing/alert_runs.ts";

const T0 = Date.parse("2026-11-29T10:00:00Z");
const MINUTE = 60_000;

for (const backend of backends()) {
  Deno.test(`flapping [${backend}]`, async (t) => {
    const { db, close } = await freshDatabase(backend);
    try {
      await db.updateTable("alert_settings").set({
        failure_threshold: 1,
        success_threshold: 1,
        flap_changes: 3,
        flap_minutes: 10,
      }).execute();
      let seen = 0;
      /** The notifications written since the last call. */
      const fresh = async () => {
        const all = await told(db);
        const out = all.slice(seen);
        seen = all.length;
        return out;
      };

      await t.step(
        "more than 3 changes in 10 minutes: one probe.flapping, quiet after it, one notification when stable",
        async () => {
          const key = await insertProbe(db, "flaps", "web", T0);
          let at = T0;
          const run = async (outcome: Outcome) => {
            at += MINUTE;
            await runAt(db, { [key]: outcome }, at);
            return await fresh();
          };
          assert.deepEqual(await run("up"), [], "unknown to up is no change told");
          assert.deepEqual(await run("down"), [["probe.down", "web", "down"]]);
          assert.deepEqual(await run("up"), [["probe.recovered", "web", "up"]]);
          assert.deepEqual(await run("down"), [["probe.down", "web", "down"]]);
          assert.deepEqual(await run("up"), [["probe.flapping", "web", "up"]], "the 4th change");
          assert.deepEqual(await run("down"), [], "quiet while flapping");
          assert.deepEqual(await run("up"), [], "quiet while flapping");
          const lastChange = at;
          await db.insertInto("status_pages").values({ project: "flaps", public: true }).execute();
          const page = await publicStatusPage({ db, project: "flaps", now: at });
          assert.equal(page?.probes[0].flapping, true, "a status page shows it as unstable");
          const incidents = await db.selectFrom("incidents").select("resolved_at")
            .where("probe_key", "=", key).execute();
          assert.equal(incidents.length, 3, "incidents still open and resolve while flapping");
          assert.ok(incidents.every((i) => i.resolved_at !== null));
          assert.deepEqual(await run("up"), [], "same state: nothing");

          assert.equal(await settleFlapping(db, new Date(lastChange + 10 * MINUTE - 1)), 0);
          assert.deepEqual(await fresh(), [], "not stable for 10 minutes yet");
          assert.equal(await settleFlapping(db, new Date(lastChange + 10 * MINUTE)), 1);
          assert.deepEqual(await fresh(), [["probe.recovered", "web", "up"]]);
          const settled = await publicStatusPage({ db, project: "flaps", now: at });
          assert.equal("flapping" in settled!.probes[0], false, "stable: as before");
          assert.equal(await settleFlapping(db, new Date(lastChange + 20 * MINUTE)), 0, "once");
          assert.deepEqual(await fresh(), []);

          at = lastChange + 30 * MINUTE;
          assert.deepEqual(await run("down"), [["probe.down", "web", "down"]], "counted afresh");
        },
      );

      await t.step("settled down: one probe.down naming its open incident", async () => {
        const key = await insertProbe(db, "flaps", "api", T0);
        let at = T0 + 120 * MINUTE;
        const outcomes: Outcome[] = ["up", "down", "up", "down", "up", "down"];
        const all = [];
        for (const outcome of outcomes) {
          at += MINUTE;
          await runAt(db, { [key]: outcome }, at);
          all.push(...await fresh());
        }
        assert.deepEqual(all.filter(([, probe]) => probe === "api"), [
          ["probe.down", "api", "down"],
          ["probe.recovered", "api", "up"],
          ["probe.down", "api", "down"],
          ["probe.flapping", "api", "up"],
        ]);
        const lastChange = at;
        at += MINUTE;
        await runAt(db, { [key]: "down" }, at);
        assert.deepEqual(await fresh(), []);
        // Each change while flapping puts the settling off: 10 minutes after the last one.
        assert.equal(await settleFlapping(db, new Date(lastChange + 10 * MINUTE - 1)), 0);
        assert.equal(await settleFlapping(db, new Date(lastChange + 10 * MINUTE)), 1);
        const open = await db.selectFrom("incidents").select("id")
          .where("probe_key", "=", key).where("resolved_at", "is", null)
          .executeTakeFirstOrThrow();
        const [last] = await db.selectFrom("notifications").select(["event", "incident_id"])
          .where("event", "=", "probe.down").orderBy("created_at", "desc").limit(1).execute();
        assert.equal(String(last.incident_id), String(open.id));
        assert.deepEqual(await fresh(), [["probe.down", "api", "down"]]);
      });

      await t.step("flap_changes 0 (the default) watches nothing", async () => {
        await db.updateTable("alert_settings").set({ flap_changes: 0 }).execute();
        const key = await insertProbe(db, "flaps", "off", T0);
        let at = T0 + 240 * MINUTE;
        const all = [];
        for (const outcome of ["up", "down", "up", "down", "up", "down"] as Outcome[]) {
          at += MINUTE;
          await runAt(db, { [key]: outcome }, at);
          all.push(...await fresh());
        }
        assert.deepEqual(all.filter(([, probe]) => probe === "off").map(([event]) => event), [
          "probe.down",
          "probe.recovered",
          "probe.down",
          "probe.recovered",
          "probe.down",
        ]);
      });
    } finally {
      await close();
    }
  });
}
