/**
 * States, incidents, reminders and the outbox, driven through the runner's own recording
 * (`claimDue` and `recordRuns`, as a runner calls them) with made-up run results, on each
 * database. What the runs reach is tested elsewhere; here the outcomes are chosen.
 */
import assert from "node:assert/strict";
import type { Outcome } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { backends, freshDatabase } from "../testing/app.ts";
import { createLogger } from "../base/log.ts";
import { systemClock } from "../base/clock.ts";
import { sleep as delay } from "../base/sleep.ts";
import { ManualClock } from "../testing/manual_clock.ts";
import { claimDue, recordRuns, syncSchedules } from "../runner/store.ts";
import { acknowledgeIncident, getIncident, listIncidents } from "../domain/incidents.ts";
import { createDeliverer, type Send } from "./deliverer.ts";
import { remindDue } from "./incidents.ts";
import { settleSchedule } from "./states.ts";
import {
  CLAIM_LEASE_MS,
  claimNotifications,
  finishAttempt,
  outboxCounts,
} from "./outbox/outbox.ts";

const RUNNER = "test-runner";
const T0 = Date.parse("2026-11-22T10:00:00Z");

/** A project with one probe, scheduled; returns the probe's key. */
async function probeIn(db: Db, project: string, url = `https://${project}.example.com/health`) {
  await db.insertInto("projects").values({ name: project }).execute();
  const { key } = await db.insertInto("probes").values({
    project,
    probe_id: `id-${project}`,
    url,
    method: "GET",
    headers: json({}),
  }).returning("key").executeTakeFirstOrThrow();
  await syncSchedules(db, { now: T0, intervalMs: 60_000 });
  return String(key);
}

/** One run of every due probe of the database, each with `outcome`, at `at`. */
async function runAll(db: Db, outcome: Outcome, at: number) {
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
    claimed.map((c) => ({
      key: c.key,
      due: c.due,
      nextDue: at + 1,
      inMaintenance: c.inMaintenance,
      result: {
        startedAt: new Date(at),
        durationMs: 10,
        outcome,
        httpStatus: outcome === "down" ? 500 : outcome === "blocked" ? null : 200,
        error: outcome === "down"
          ? "HTTP 500"
          : outcome === "blocked"
          ? "127.0.0.1 is loopback"
          : null,
        address: "127.0.0.1",
        failedChecks: null,
      },
    })),
  );
  return claimed.length;
}

async function stateOf(db: Db, key: string) {
  return await db.selectFrom("probe_schedule").select(["state", "fail_streak", "pass_streak"])
    .where("probe_key", "=", key).executeTakeFirstOrThrow();
}

const notifications = (db: Db) =>
  db.selectFrom("notifications").select(["id", "event", "target", "incident_id", "payload"])
    .orderBy("created_at").orderBy("id").execute();

/** The system's timers with the time standing at `at`. */
const clockAt = (at: Date) => ({ ...systemClock, now: () => at.getTime() });

for (const backend of backends()) {
  Deno.test(`probe states and incidents [${backend}]`, async (t) => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    try {
      await t.step(
        "down after 3 failing runs, up after 2 passing ones: one incident, one down and one recovered notification",
        async () => {
          const key = await probeIn(db, "flip");
          let at = T0;
          const step = async (outcome: Outcome) => {
            at += 60_000;
            assert.equal(await runAll(db, outcome, at), 1);
            return await stateOf(db, key);
          };
          assert.equal((await step("up")).state, "up");
          assert.equal((await step("down")).state, "up");
          assert.equal((await step("blocked")).state, "up", "blocked counts as failing");
          assert.deepEqual(await listIncidents({ db, input: { limit: 50 } }), {
            data: [],
            meta: { count: 0, next_before: null },
          });
          assert.equal((await step("down")).state, "down");
          const open = (await listIncidents({ db, input: { limit: 50, state: "open" } })).data;
          assert.equal(open.length, 1);
          assert.equal(open[0].runs_failed, 3);
          assert.equal(open[0].cause, "answered HTTP 500, expected a status below 400");
          assert.equal(open[0].label, "https://flip.example.com/health");
          assert.equal((await step("down")).state, "down");
          assert.equal((await step("up")).state, "down", "one passing run is not enough");
          assert.equal((await step("degraded")).state, "degraded", "degraded counts as passing");

          const [incident] = (await listIncidents({ db, input: { limit: 50 } })).data;
          assert.equal(incident.state, "resolved");
          assert.equal(incident.resolution, "recovered");
          assert.equal(incident.runs_failed, 4);
          assert.equal(incident.duration_seconds, 180);
          const sent = await notifications(db);
          assert.deepEqual(sent.map((n) => [n.event, n.target, String(n.incident_id)]), [
            ["probe.down", "log", incident.id],
            ["probe.recovered", "log", incident.id],
          ]);
          const detail = await getIncident({ db, id: incident.id });
          assert.deepEqual(detail.notifications.map((n) => n.type), [
            "probe.down",
            "probe.recovered",
          ]);
          assert.match(detail.notifications[0].id, /^msg_[0-9a-f]{32}$/);
        },
      );

      await t.step("runs in a maintenance window move no state and are counted apart", async () => {
        await db.deleteFrom("probe_schedule").execute();
        const key = await probeIn(db, "quiet");
        await db.deleteFrom("probe_schedule").where("probe_key", "!=", key).execute();
        let at = T0 + 3_600_000;
        await db.insertInto("maintenance_windows").values({
          project: "quiet",
          starts_at: new Date(at),
          ends_at: new Date(at + 10 * 60_000),
          reason: "upgrade",
        }).execute();
        const before = (await notifications(db)).length;
        for (let i = 0; i < 5; i++) {
          at += 60_000;
          await runAll(db, "down", at);
        }
        assert.deepEqual(await stateOf(db, key), {
          state: "unknown",
          fail_streak: 0,
          pass_streak: 0,
        });
        assert.equal((await notifications(db)).length, before);
        const rollup = await db.selectFrom("probe_rollups").selectAll().where("probe_key", "=", key)
          .executeTakeFirstOrThrow();
        assert.equal(rollup.maintenance, 5);
        assert.equal(rollup.down, 0);
        const results = await db.selectFrom("probe_results").select("in_maintenance")
          .where("probe_key", "=", key).execute();
        assert.deepEqual(results.map((r) => r.in_maintenance), [true, true, true, true, true]);
        // After the window the failures count from nothing.
        at += 10 * 60_000;
        for (let i = 0; i < 3; i++) {
          at += 60_000;
          await runAll(db, "down", at);
        }
        assert.equal((await stateOf(db, key)).state, "down");
      });

      await t.step(
        "reminders go out while down and unacknowledged, and stop on acknowledgement",
        async () => {
          await db.deleteFrom("probe_schedule").execute();
          await db.updateTable("alert_settings").set({ reminder_minutes: 5, failure_threshold: 1 })
            .execute();
          const key = await probeIn(db, "nag");
          await db.deleteFrom("probe_schedule").where("probe_key", "!=", key).execute();
          const at = T0 + 7_200_000;
          await runAll(db, "down", at);
          const [incident] =
            (await listIncidents({ db, input: { project: "nag", limit: 5 } })).data;
          assert.equal(incident.state, "open");
          assert.equal(await remindDue(db, new Date(at + 4 * 60_000)), 0, "not yet");
          assert.equal(await remindDue(db, new Date(at + 5 * 60_000)), 1);
          assert.equal(await remindDue(db, new Date(at + 6 * 60_000)), 0, "once per interval");
          assert.equal(await remindDue(db, new Date(at + 10 * 60_000)), 1);
          const acknowledged = await acknowledgeIncident({ db, id: incident.id });
          assert.notEqual(acknowledged.acknowledged_at, null);
          assert.equal(await remindDue(db, new Date(at + 60 * 60_000)), 0, "acknowledged: no more");
          const types = (await getIncident({ db, id: incident.id })).notifications.map((n) =>
            n.type
          );
          // The targets told are told of the acknowledgement, once.
          assert.deepEqual(types, [
            "probe.down",
            "probe.reminder",
            "probe.reminder",
            "probe.acknowledged",
          ]);
          await db.updateTable("alert_settings").set({ reminder_minutes: 0, failure_threshold: 3 })
            .execute();
        },
      );

      await t.step("a disabled policy records incidents and notifies nobody", async () => {
        await db.deleteFrom("probe_schedule").execute();
        await db.updateTable("alert_settings").set({ enabled: false, failure_threshold: 1 })
          .execute();
        const key = await probeIn(db, "hush");
        await db.deleteFrom("probe_schedule").where("probe_key", "!=", key).execute();
        const before = (await notifications(db)).length;
        await runAll(db, "down", T0 + 9_000_000);
        assert.equal((await stateOf(db, key)).state, "down");
        assert.equal(
          (await listIncidents({ db, input: { project: "hush", limit: 5 } })).data.length,
          1,
        );
        assert.equal((await notifications(db)).length, before);
        await db.updateTable("alert_settings").set({ enabled: true, failure_threshold: 3 })
          .execute();
      });
    } finally {
      await handle.close();
    }
  });

  Deno.test(`a run recorded after a later one does not move the state [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    try {
      const key = await probeIn(db, "late");
      const at = T0 + 60_000;
      // A scheduled run is claimed and starts; a run-now that starts after it is settled first.
      const [claimed] = await claimDue(db, {
        now: at,
        horizon: at,
        leaseUntil: at + 60_000,
        runner: RUNNER,
        limit: 10,
      });
      assert.equal(claimed.key, key);
      const run = (startedAt: number, outcome: Outcome) => ({
        startedAt: new Date(startedAt),
        durationMs: 10,
        outcome,
        httpStatus: outcome === "down" ? 500 : 200,
        error: outcome === "down" ? "HTTP 500" : null,
        address: "127.0.0.1",
        failedChecks: null,
      });
      const manual = await settleSchedule(db, [{
        key,
        dueAt: null,
        nextDueAt: null,
        run: run(at + 2_000, "up"),
        counted: true,
      }], { manual: true });
      assert.deepEqual(manual.changes.map((c) => c.to), ["up"]);
      // The scheduled run, started before the run-now, saw the target down: recorded, no move.
      const { recorded } = await recordRuns(db, RUNNER, [{
        key,
        due: claimed.due,
        nextDue: at + 60_000,
        inMaintenance: false,
        result: run(at + 1_000, "down"),
      }]);
      assert.equal(recorded, 1);
      assert.deepEqual(await stateOf(db, key), { state: "up", fail_streak: 0, pass_streak: 1 });
      const row = await db.selectFrom("probe_schedule").select(["last_outcome", "last_run_at"])
        .where("probe_key", "=", key).executeTakeFirstOrThrow();
      assert.equal(row.last_outcome, "up");
      assert.equal(new Date(row.last_run_at!).getTime(), at + 2_000);
      const results = await db.selectFrom("probe_results").select("outcome")
        .where("probe_key", "=", key).execute();
      assert.equal(results.length, 1, "the late run is kept in the history");
    } finally {
      await handle.close();
    }
  });

  Deno.test(`the outbox: at least once, with a stable id, nothing dropped [${backend}]`, async (t) => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    const log = createLogger("silent");
    try {
      await db.updateTable("alert_settings").set({ failure_threshold: 1 }).execute();
      await probeIn(db, "boxed");
      await runAll(db, "down", T0 + 60_000);
      const [queued] = await notifications(db);
      assert.equal(queued.event, "probe.down");

      await t.step(
        "a deliverer that dies between claim and send: another sends it later, same id",
        async () => {
          // The outbox runs on the wall clock: a notification is due from when it was written.
          const now = new Date(Date.now() + 1_000);
          const [taken] = await claimNotifications(db, { deliverer: "dead", now, limit: 10 });
          assert.equal(taken.id, queued.id);
          // The dead one never sends. Within its lease nobody else may take the notification.
          const sent: { target: string; id: string; type: string }[] = [];
          const send: Send = (target, message) => {
            sent.push({ target, id: message.id, type: message.type });
            return Promise.resolve({ outcome: "delivered", attempts: 1 });
          };
          const early = createDeliverer({ db, send, log, id: "alive", clock: clockAt(now) });
          assert.equal(await early.deliverOnce(), 0);
          const later = new Date(now.getTime() + CLAIM_LEASE_MS + 1);
          const alive = createDeliverer({ db, send, log, id: "alive", clock: clockAt(later) });
          assert.equal(await alive.deliverOnce(), 1);
          assert.deepEqual(sent, [{ target: "log", id: queued.id, type: "probe.down" }]);
          // The dead one coming back late records nothing over the delivered notification.
          await finishAttempt(db, {
            deliverer: "dead",
            claimed: taken,
            ok: false,
            error: "late",
            startedAt: later,
            durationMs: 1,
            now: later,
          });
          assert.deepEqual(await outboxCounts(db), { pending: 0, delivered: 1, failed: 0 });
          const attempts = await db.selectFrom("notification_attempts").selectAll().execute();
          assert.deepEqual(attempts.map((a) => [a.notification_id, a.outcome, a.instance_id]), [
            [queued.id, "delivered", "alive"],
          ]);
        },
      );

      await t.step("a failed send is retried after its back-off, with the same id", async () => {
        await db.insertInto("notifications").values({
          id: "msg_retry",
          event: "target.test",
          target: "hook",
          incident_id: null,
          payload: json(queued.payload),
          next_attempt_at: new Date(Date.now()),
        }).execute();
        const seen: string[] = [];
        let fail = true;
        const send: Send = (_target, message) => {
          seen.push(message.id);
          return Promise.resolve(
            fail
              ? { outcome: "failed", attempts: 1, error: "HTTP 503" }
              : { outcome: "delivered", attempts: 1 },
          );
        };
        let clock = Date.now() + 2 * CLAIM_LEASE_MS;
        const deliverer = createDeliverer({
          db,
          send,
          log,
          clock: { ...systemClock, now: () => clock },
        });
        assert.equal(await deliverer.deliverOnce(), 1);
        const row = await db.selectFrom("notifications").selectAll().where("id", "=", "msg_retry")
          .executeTakeFirstOrThrow();
        assert.equal(row.status, "pending");
        assert.equal(row.last_error, "HTTP 503");
        assert.equal(new Date(row.next_attempt_at).getTime(), clock + 5_000);
        clock += 1_000;
        assert.equal(await deliverer.deliverOnce(), 0, "not before its back-off");
        fail = false;
        clock += 5_000;
        assert.equal(await deliverer.deliverOnce(), 1);
        assert.deepEqual(seen, ["msg_retry", "msg_retry"]);
        assert.deepEqual(await outboxCounts(db), { pending: 0, delivered: 2, failed: 0 });
      });
    } finally {
      await handle.close();
    }
  });

  Deno.test(`the deliverer claims retries every second and looks for reminders every 5 s [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    // After the database's own now(), which the queued notification's first attempt is at.
    const start = Date.now() + 60_000;
    const clock = new ManualClock(new Date(start));
    const sent: { type: string; at: number }[] = [];
    const send: Send = (_target, message) => {
      sent.push({ type: message.type, at: clock.now() - start });
      // The first attempt fails: the retry is due 5 s later.
      return Promise.resolve(
        sent.length === 1
          ? { outcome: "failed", attempts: 1, error: "HTTP 503" }
          : { outcome: "delivered", attempts: 1 },
      );
    };
    const deliverer = createDeliverer({ db, send, log: createLogger("silent"), clock });
    /** Waits for both loops to sleep (their runs on the clock's time are over). */
    const asleep = async () => {
      for (let i = 0; i < 1_000 && clock.sleeping < 2; i++) await delay(5);
    };
    try {
      await db.updateTable("alert_settings").set({ failure_threshold: 1, reminder_minutes: 5 })
        .execute();
      await probeIn(db, "paced");
      await runAll(db, "down", start);
      // The incident's reminder comes due 6 s from now, between two looks for it.
      await db.updateTable("incidents").set({ next_reminder_at: new Date(start + 6_000) })
        .execute();
      deliverer.start();
      await asleep();
      for (let second = 1; second <= 12; second++) {
        clock.advance(1_000);
        await asleep();
      }
      assert.deepEqual(sent, [
        { type: "probe.down", at: 0 },
        { type: "probe.down", at: 5_000 },
        { type: "probe.reminder", at: 10_000 },
      ]);
    } finally {
      await deliverer.stop();
      await handle.close();
    }
  });
}
