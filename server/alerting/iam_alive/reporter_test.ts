import { type IamAliveChannel, type IamAliveReport, iamAliveReport } from "@probe/shared";
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createDeliverer, type Deliverer } from "../deliverer.ts";
import { createDispatch } from "../dispatch.ts";
import {
  backoffMs,
  CLAIM_LEASE_MS,
  claimNotifications,
  enqueueMessages,
  MAX_ATTEMPTS,
} from "../outbox/outbox.ts";
import { type DatabaseHandle, type Db, openDatabase } from "../../storage/database.ts";
import { json as sqlJson } from "../../storage/json.ts";
import { migrateToLatest } from "../../storage/migrator.ts";
import { IAM_ALIVE_MESSAGE_TYPE, listDeliveries, reportMessageId } from "./store.ts";
import { updateIamAlive } from "../../domain/settings.ts";
import { createLogger } from "../../base/log.ts";
import type { DeliveryResult } from "../notify/delivery.ts";
import type { Notifier } from "../notify/targets.ts";
import {
  type Backend,
  backends,
  createPostgresDatabase,
  freshDatabase,
} from "../../testing/app.ts";
import { type Channel, type Channels, createChannels } from "./channels.ts";
import { ManualClock } from "../../testing/manual_clock.ts";
import { createReporter, type Reporter, type ReporterOptions } from "./reporter.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const POLL = 10 * MINUTE;
const silent = createLogger("silent");

interface Sent {
  channel: IamAliveChannel;
  report: IamAliveReport;
}

/** Channels that record what they were given and answer as told. */
function recordingChannels(
  sent: Sent[],
  answer: (channel: IamAliveChannel) => DeliveryResult = () => ({
    outcome: "delivered",
    attempts: 1,
  }),
): Channels {
  const channel = (name: IamAliveChannel): Channel => ({
    missing: [],
    deliver: (report) => {
      sent.push({ channel: name, report });
      return Promise.resolve(answer(name));
    },
  });
  return { log: channel("log"), webhook: channel("webhook"), mail: channel("mail") };
}

/** A database of its own, migrated (a fresh PostgreSQL one starts empty). */
async function migratedDatabase(backend: Backend): Promise<DatabaseHandle> {
  const handle = await freshDatabase(backend);
  await migrateToLatest(handle.db);
  return handle;
}

/**
 * Remembers every table's rows now (the migrations' own tables aside) and answers a function
 * that puts them back: the steps below share one database, each starting as a fresh one would,
 * in a few milliseconds where opening a fresh database takes half a second.
 */
async function rowsToRestore(db: Db): Promise<() => Promise<void>> {
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE'
      and table_name not like 'kysely_migration%'`.execute(db);
  const tables = rows.map((r) => r.name);
  const kept: string[] = [];
  await sql`create schema kept_rows`.execute(db);
  for (const table of tables) {
    await sql`create table ${sql.id("kept_rows", table)} as select * from ${sql.id(table)}`
      .execute(db);
    const { rows: [{ n }] } = await sql<{ n: number }>`
      select count(*)::int as n from ${sql.id("kept_rows", table)}`.execute(db);
    if (n > 0) kept.push(table);
  }
  return async () => {
    await sql`truncate ${sql.join(tables.map((t) => sql.id(t)))} restart identity cascade`
      .execute(db);
    for (const table of kept) {
      await sql`insert into ${sql.id(table)} overriding system value
                select * from ${sql.id("kept_rows", table)}`.execute(db);
    }
  };
}

/** Moves time on by `ms` and waits until each of `loops` reporter loops has gone back to sleep. */
async function step(clock: ManualClock, ms: number, loops = 1): Promise<void> {
  const before = clock.sleeps;
  clock.advance(ms);
  await clock.sleepsReach(before + loops);
}

/** The reports sent, one entry per report (not per channel), in order. */
const reports = (sent: Sent[]) => sent.filter((s) => s.channel === "log").map((s) => s.report);

/** The scheduled reports in the outbox for one channel, by sequence (validated on the way). */
async function queued(db: Db, channel: IamAliveChannel = "log"): Promise<IamAliveReport[]> {
  const rows = await db.selectFrom("notifications").select("payload")
    .where("event", "=", IAM_ALIVE_MESSAGE_TYPE).where("target", "=", `iam_alive:${channel}`)
    .execute();
  return rows.map((r) => iamAliveReport.parse(r.payload)).sort((a, b) => a.sequence - b.sequence);
}

/** The outbox's I'm alive messages: id, target, status and attempts, by id. */
async function outbox(db: Db) {
  return await db.selectFrom("notifications")
    .select(["id", "target", "status", "attempts"])
    .where("event", "=", IAM_ALIVE_MESSAGE_TYPE)
    .orderBy("id").execute();
}

/** The notifier of alert events: none are sent in these tests. */
const noAlerts: Notifier = {
  send: () => Promise.resolve({ outcome: "failed", attempts: 0, error: "no alerts here" }),
};

/** A reporter, and a deliverer over the outbox that a test drives by hand. */
interface Harness extends Reporter {
  deliverer: Deliverer;
  /** The outbox messages the deliverer handed to the dispatch, in order. */
  messages: { id: string; target: string }[];
  /** Delivers whatever is due now (by the test's clock) until nothing is; answers how many. */
  deliver(): Promise<number>;
}

function reporterOn(
  handle: DatabaseHandle,
  clock: ManualClock,
  sent: Sent[],
  extra: Partial<ReporterOptions> = {},
): Harness {
  const reporter = createReporter({
    db: handle.db,
    log: silent,
    channels: recordingChannels(sent),
    clock,
    pollMs: POLL,
    ...extra,
  });
  const messages: Harness["messages"] = [];
  const dispatch = createDispatch({ notifier: noAlerts, iamAlive: reporter });
  const deliverer = createDeliverer({
    db: handle.db,
    log: silent,
    id: `deliverer-${extra.instanceId ?? "1"}`,
    clock,
    send: (target, message) => {
      messages.push({ id: message.id, target });
      return dispatch(target, message);
    },
  });
  return {
    ...reporter,
    deliverer,
    messages,
    async deliver() {
      let total = 0;
      for (let n; (n = await deliverer.deliverOnce()) > 0;) total += n;
      return total;
    },
  };
}

for (const backend of backends()) {
  Deno.test(`I'm alive schedule [${backend}]`, async (t) => {
    // One database for all the steps (a failing step ends in t.step, so the close below runs).
    const database = await migratedDatabase(backend);
    const restore = await rowsToRestore(database.db);
    /** The database as a fresh one would be. */
    const freshState = async () => {
      await restore();
      return database;
    };

    await t.step(
      "one report is queued at once on enabling, then exactly one per interval",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const reporter = reporterOn(handle, clock, sent);
        try {
          const t0 = clock.now();
          await updateIamAlive({ db: handle.db, input: { interval_hours: 1, channels: ["log"] } });
          await reporter.start();
          await clock.sleepsReach(1);
          assert.equal((await queued(handle.db)).length, 1);
          for (let i = 1; i <= 3 * 6; i++) {
            await step(clock, POLL);
            assert.equal(
              (await queued(handle.db)).length,
              1 + Math.floor((i * POLL) / HOUR),
              `after ${i} polls`,
            );
          }
          const all = await queued(handle.db);
          assert.deepEqual(all.map((r) => Date.parse(r.time) - t0), [0, HOUR, 2 * HOUR, 3 * HOUR]);
          assert.deepEqual(all.map((r) => r.sequence), [1, 2, 3, 4]);
          assert.deepEqual(all.map((r) => r.since && Date.parse(r.since) - t0), [
            null,
            0,
            HOUR,
            2 * HOUR,
          ]);
          // Nothing went out inline; the deliverer sends each once.
          assert.equal(sent.length, 0);
          assert.equal(await reporter.deliver(), 4);
          assert.deepEqual(reports(sent), all);
          assert.equal(await reporter.deliver(), 0);
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step(
      "none is queued while disabled; enabling queues one at once; disabling stops them",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const reporter = reporterOn(handle, clock, sent);
        try {
          await reporter.start();
          await clock.sleepsReach(1);
          for (let i = 0; i < 30; i++) await step(clock, 2 * HOUR);
          assert.equal((await outbox(handle.db)).length, 0);

          // The PATCH wakes the reporter: the report is queued without time passing.
          const before = clock.sleeps;
          await updateIamAlive({ db: handle.db, input: { enabled: true } });
          reporter.wake();
          await clock.sleepsReach(before + 1);
          const first = await queued(handle.db);
          assert.equal(first.length, 1);
          // The default schedule: every 24 hours, over the log channel.
          assert.equal(first[0].interval_hours, 24);
          assert.deepEqual((await outbox(handle.db)).map((m) => m.target), ["iam_alive:log"]);

          await updateIamAlive({ db: handle.db, input: { enabled: false } });
          for (let i = 0; i < 30; i++) await step(clock, 2 * HOUR);
          assert.equal((await outbox(handle.db)).length, 1);
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step("changing the interval or the channels queues one at once", async () => {
      const handle = await freshState();
      const clock = new ManualClock();
      const sent: Sent[] = [];
      const reporter = reporterOn(handle, clock, sent);
      const count = async () => (await queued(handle.db)).length;
      try {
        await updateIamAlive({ db: handle.db, input: { interval_hours: 24, channels: ["log"] } });
        await reporter.start();
        await clock.sleepsReach(1);
        await step(clock, HOUR);
        assert.equal(await count(), 1);

        let before = clock.sleeps;
        await updateIamAlive({ db: handle.db, input: { interval_hours: 2 } });
        reporter.wake();
        await clock.sleepsReach(before + 1);
        assert.equal(await count(), 2);
        await step(clock, HOUR);
        assert.equal(await count(), 2);
        await step(clock, HOUR);
        assert.equal(await count(), 3);

        before = clock.sleeps;
        await updateIamAlive({ db: handle.db, input: { channels: ["log", "mail"] } });
        reporter.wake();
        await clock.sleepsReach(before + 1);
        assert.equal(await count(), 4);
        assert.deepEqual(
          (await outbox(handle.db)).filter((m) => m.id.startsWith("msg_iamalive_4_")).map((m) =>
            m.target
          ),
          ["iam_alive:log", "iam_alive:mail"],
        );

        // Sending enabled alone while on changes nothing.
        before = clock.sleeps;
        await updateIamAlive({ db: handle.db, input: { enabled: true } });
        reporter.wake();
        await clock.sleepsReach(before + 1);
        assert.equal(await count(), 4);
      } finally {
        await reporter.stop();
      }
    });

    await t.step("a restart mid-interval queues none until the report is due", async () => {
      const handle = await freshState();
      const clock = new ManualClock();
      const sent: Sent[] = [];
      const count = async () => (await queued(handle.db)).length;
      const first = reporterOn(handle, clock, sent);
      await updateIamAlive({ db: handle.db, input: { interval_hours: 2, channels: ["log"] } });
      await first.start();
      await clock.sleepsReach(1);
      await step(clock, HOUR);
      await first.stop();
      assert.equal(await count(), 1);

      const second = reporterOn(handle, clock, sent);
      try {
        const before = clock.sleeps;
        await second.start();
        await clock.sleepsReach(before + 1);
        assert.equal(await count(), 1, "the restart repeats no report");
        await step(clock, 50 * MINUTE);
        assert.equal(await count(), 1);
        await step(clock, 10 * MINUTE);
        assert.equal(await count(), 2, "the restart skips no report");
        assert.equal((await queued(handle.db))[1].sequence, 2);
      } finally {
        await second.stop();
      }
    });

    await t.step(
      "after an outage longer than the interval one report is queued, not a backlog",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const count = async () => (await queued(handle.db)).length;
        const first = reporterOn(handle, clock, sent);
        await updateIamAlive({ db: handle.db, input: { interval_hours: 1, channels: ["log"] } });
        const t0 = clock.now();
        await first.start();
        await clock.sleepsReach(1);
        await first.stop();

        clock.advance(50 * HOUR);
        const second = reporterOn(handle, clock, sent);
        try {
          const before = clock.sleeps;
          await second.start();
          await clock.sleepsReach(before + 1);
          assert.equal(await count(), 2);
          assert.equal((await queued(handle.db))[1].since, new Date(t0).toISOString());
          await step(clock, 50 * MINUTE);
          assert.equal(await count(), 2);
          await step(clock, 10 * MINUTE);
          assert.equal(await count(), 3);
        } finally {
          await second.stop();
        }
      },
    );

    await t.step(
      "a due report becomes one outbox message per channel, with an id written once",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const reporter = reporterOn(handle, clock, sent);
        try {
          await updateIamAlive({
            db: handle.db,
            input: { interval_hours: 1, channels: ["mail", "webhook", "log"] },
          });
          const queuedReport = await reporter.runDue();
          assert.ok(queuedReport);
          assert.equal(queuedReport.report.sequence, 1);
          assert.deepEqual(queuedReport.channels, ["mail", "webhook", "log"]);
          assert.equal(sent.length, 0, "nothing is sent inline");
          assert.deepEqual((await outbox(handle.db)).map((m) => [m.id, m.target, m.status]), [
            ["msg_iamalive_1_log", "iam_alive:log", "pending"],
            ["msg_iamalive_1_mail", "iam_alive:mail", "pending"],
            ["msg_iamalive_1_webhook", "iam_alive:webhook", "pending"],
          ]);
          for (const channel of ["log", "mail", "webhook"] as const) {
            assert.deepEqual(await queued(handle.db, channel), [queuedReport.report]);
          }

          // A second writer of the same report (its ids) adds nothing.
          const again = await enqueueMessages(
            handle.db,
            queuedReport.channels.map((channel) => ({
              id: reportMessageId(1, channel),
              target: `iam_alive:${channel}`,
              type: IAM_ALIVE_MESSAGE_TYPE,
              payload: { ...queuedReport.report, time: new Date(0).toISOString() },
            })),
          );
          assert.equal(again, 0);
          assert.equal((await outbox(handle.db)).length, 3);
          assert.deepEqual(await queued(handle.db, "webhook"), [queuedReport.report]);
          assert.equal(await reporter.runDue(), null, "the next report is not due yet");
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step("two reporters racing for a due report queue it once", async () => {
      const handle = await freshState();
      const clock = new ManualClock();
      const sent: Sent[] = [];
      const a = reporterOn(handle, clock, sent, { instanceId: "a" });
      const b = reporterOn(handle, clock, sent, { instanceId: "b" });
      try {
        await updateIamAlive({
          db: handle.db,
          input: { interval_hours: 1, channels: ["log", "webhook"] },
        });
        for (let i = 1; i <= 10; i++) {
          const results = await Promise.all([a.runDue(), b.runDue()]);
          assert.equal(results.filter((r) => r !== null).length, 1, `round ${i}`);
          await handle.db.updateTable("iam_alive_settings").set({ next_report_at: null }).execute();
        }
        const messages = await outbox(handle.db);
        assert.equal(messages.length, 20);
        assert.deepEqual(
          (await queued(handle.db, "webhook")).map((r) => r.sequence),
          [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        );
      } finally {
        await a.stop();
        await b.stop();
      }
    });

    await t.step(
      "a failing channel stops none of the others and every attempt is recorded",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const channels = recordingChannels(
          sent,
          (channel) =>
            channel === "webhook"
              ? { outcome: "failed", attempts: 1, error: "HTTP 503" }
              : { outcome: "delivered", attempts: 1 },
        );
        channels.mail = {
          missing: [],
          deliver: () => Promise.reject(new Error("a bug")),
        };
        const reporter = reporterOn(handle, clock, sent, { channels, instanceId: "inst-1" });
        try {
          await updateIamAlive({
            db: handle.db,
            input: { interval_hours: 1, channels: ["mail", "webhook", "log"] },
          });
          assert.ok(await reporter.runDue());
          assert.equal(await reporter.deliver(), 3);

          const stored = await listDeliveries({ db: handle.db, input: { limit: 10 } });
          assert.deepEqual(
            stored.map((d) => [
              d.channel,
              d.trigger,
              d.outcome,
              d.attempts,
              d.error,
              d.sequence,
              d.instance_id,
            ]).sort(),
            [
              ["log", "schedule", "delivered", 1, null, 1, "inst-1"],
              ["mail", "schedule", "failed", 1, "unexpected error in the channel", 1, "inst-1"],
              ["webhook", "schedule", "failed", 1, "HTTP 503", 1, "inst-1"],
            ],
          );
          assert.deepEqual((await outbox(handle.db)).map((m) => [m.target, m.status]), [
            ["iam_alive:log", "delivered"],
            ["iam_alive:mail", "pending"],
            ["iam_alive:webhook", "pending"],
          ]);
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step(
      "a delivery that fails is retried after the back-off with the same id and report",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        let calls = 0;
        const channels = recordingChannels(
          sent,
          () =>
            ++calls <= 2
              ? { outcome: "failed", attempts: 1, error: "network error: connection refused" }
              : { outcome: "delivered", attempts: 1 },
        );
        const reporter = reporterOn(handle, clock, sent, { channels });
        try {
          await updateIamAlive({
            db: handle.db,
            input: { interval_hours: 1, channels: ["webhook"] },
          });
          const queuedReport = await reporter.runDue();
          assert.ok(queuedReport);
          assert.equal(await reporter.deliver(), 1);
          for (const attempt of [1, 2]) {
            clock.advance(backoffMs(attempt) - 1);
            assert.equal(await reporter.deliver(), 0, `not before back-off ${attempt}`);
            clock.advance(1);
            assert.equal(await reporter.deliver(), 1, `retry ${attempt}`);
          }
          clock.advance(24 * HOUR - 10 * MINUTE);
          assert.equal(await reporter.deliver(), 0, "a delivered report is not sent again");

          assert.deepEqual(sent.map((s) => s.report), [
            queuedReport.report,
            queuedReport.report,
            queuedReport.report,
          ]);
          assert.deepEqual(reporter.messages, [
            { id: "msg_iamalive_1_webhook", target: "iam_alive:webhook" },
            { id: "msg_iamalive_1_webhook", target: "iam_alive:webhook" },
            { id: "msg_iamalive_1_webhook", target: "iam_alive:webhook" },
          ]);
          // The deliveries list shows each attempt, newest first.
          const stored = await listDeliveries({ db: handle.db, input: { limit: 10 } });
          assert.deepEqual(stored.map((d) => [d.sequence, d.channel, d.outcome, d.attempts]), [
            [1, "webhook", "delivered", 3],
            [1, "webhook", "failed", 2],
            [1, "webhook", "failed", 1],
          ]);
          assert.deepEqual(
            stored.map((d) => Date.parse(d.time) - Date.parse(stored[2].time)),
            [backoffMs(1) + backoffMs(2), backoffMs(1), 0],
          );
          assert.deepEqual((await outbox(handle.db)).map((m) => [m.status, m.attempts]), [
            ["delivered", 3],
          ]);
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step(
      "a deliverer that dies between claim and send leaves the report to another, same id",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const reporter = reporterOn(handle, clock, sent);
        try {
          await updateIamAlive({ db: handle.db, input: { interval_hours: 1, channels: ["log"] } });
          const queuedReport = await reporter.runDue();
          assert.ok(queuedReport);
          // The dead one claims and never sends.
          const claimed = await claimNotifications(handle.db, {
            deliverer: "dead",
            now: clock.date(),
            limit: 10,
          });
          assert.deepEqual(claimed.map((c) => c.id), ["msg_iamalive_1_log"]);
          assert.equal(await reporter.deliver(), 0, "the claim holds for its lease");
          clock.advance(CLAIM_LEASE_MS + 1);
          assert.equal(await reporter.deliver(), 1);
          assert.deepEqual(reports(sent), [queuedReport.report]);
          assert.deepEqual(reporter.messages.map((m) => m.id), ["msg_iamalive_1_log"]);
          const stored = await listDeliveries({ db: handle.db, input: { limit: 10 } });
          assert.deepEqual(stored.map((d) => [d.outcome, d.attempts]), [["delivered", 2]]);
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step(
      "a channel without configuration is retried with the back-off, then given up",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const channels = recordingChannels(sent);
        channels.webhook = { ...channels.webhook, missing: ["IAM_ALIVE_WEBHOOK_URL"] };
        const reporter = reporterOn(handle, clock, sent, { channels });
        try {
          await updateIamAlive({
            db: handle.db,
            input: { interval_hours: 24, channels: ["webhook", "log"] },
          });
          assert.ok(await reporter.runDue());
          assert.equal(await reporter.deliver(), 2);
          for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
            clock.advance(backoffMs(attempt));
            assert.equal(await reporter.deliver(), 1, `attempt ${attempt + 1}`);
          }
          clock.advance(20 * HOUR);
          assert.equal(await reporter.deliver(), 0, "given up: no more attempts");

          assert.deepEqual(sent.map((s) => s.channel), ["log"]);
          assert.deepEqual((await outbox(handle.db)).map((m) => [m.target, m.status, m.attempts]), [
            ["iam_alive:log", "delivered", 1],
            ["iam_alive:webhook", "failed", MAX_ATTEMPTS],
          ]);
          const stored = (await listDeliveries({ db: handle.db, input: { limit: 50 } }))
            .filter((d) => d.channel === "webhook");
          assert.deepEqual(
            stored.map((d) => d.attempts),
            Array.from({ length: MAX_ATTEMPTS }, (_, i) => MAX_ATTEMPTS - i),
          );
          for (const d of stored) {
            assert.equal(d.outcome, "not_configured");
            assert.equal(d.error, "not configured: set IAM_ALIVE_WEBHOOK_URL");
          }
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step("a message that is not a valid report is not sent", async () => {
      const handle = await freshState();
      const clock = new ManualClock();
      const sent: Sent[] = [];
      const reporter = reporterOn(handle, clock, sent);
      try {
        const report = iamAliveReport.parse({
          type: "iam_alive",
          sequence: 7,
          trigger: "schedule",
          time: clock.date().toISOString(),
          since: null,
          version: "1",
          instance_id: "x",
          uptime_seconds: 1,
          interval_hours: 1,
          counts: { projects: 0, probes: 0 },
        });
        await enqueueMessages(handle.db, [
          { id: "m1", target: "iam_alive:log", type: IAM_ALIVE_MESSAGE_TYPE, payload: { report } },
          { id: "m2", target: "iam_alive:pager", type: IAM_ALIVE_MESSAGE_TYPE, payload: report },
          { id: "m3", target: "iam_alive:log", type: IAM_ALIVE_MESSAGE_TYPE, payload: report },
        ]);
        assert.equal(await reporter.deliver(), 3);
        assert.deepEqual(reports(sent), [report]);
        const rows = await handle.db.selectFrom("notifications")
          .select(["id", "status", "last_error"]).orderBy("id").execute();
        assert.deepEqual(rows, [
          { id: "m1", status: "pending", last_error: "invalid I'm alive report" },
          { id: "m2", status: "pending", last_error: "not an I'm alive channel" },
          { id: "m3", status: "delivered", last_error: null },
        ]);
      } finally {
        await reporter.stop();
      }
    });

    await t.step(
      "a test report is sent at once, takes a number of its own and leaves the schedule alone",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const reporter = reporterOn(handle, clock, sent);
        try {
          await updateIamAlive({ db: handle.db, input: { interval_hours: 1, channels: ["log"] } });
          await reporter.runDue();
          clock.advance(10 * MINUTE);
          const test = await reporter.sendTest();
          assert.equal(test.report.trigger, "test");
          assert.equal(test.report.sequence, 2);
          assert.deepEqual(reports(sent), [test.report], "sent without the outbox");
          assert.deepEqual(test.deliveries.map((d) => [d.channel, d.outcome, d.trigger]), [
            ["log", "delivered", "test"],
          ]);
          assert.deepEqual((await outbox(handle.db)).map((m) => m.id), ["msg_iamalive_1_log"]);
          assert.equal(await reporter.runDue(), null);
          clock.advance(50 * MINUTE);
          const next = await reporter.runDue();
          assert.equal(next?.report.sequence, 3);
          assert.equal(next?.report.trigger, "schedule");
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step(
      "the report carries counts, version, uptime and the runner's figures",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const asked: Date[] = [];
        const started = clock.date();
        const reporter = reporterOn(handle, clock, sent, {
          instanceId: "inst-9",
          version: "9.9.9",
          runnerFigures: (since) => {
            asked.push(since);
            return Promise.resolve({ runs: 12, failures: 2, slip_p99_ms: 35 });
          },
        });
        try {
          await handle.db.insertInto("projects").values({ name: "r-a" }).execute();
          await updateIamAlive({ db: handle.db, input: { interval_hours: 1, channels: ["log"] } });
          clock.advance(90_000);
          const first = await reporter.runDue();
          clock.advance(HOUR);
          const second = await reporter.runDue();
          assert.deepEqual(first?.report, {
            type: "iam_alive",
            sequence: 1,
            trigger: "schedule",
            time: new Date(started.getTime() + 90_000).toISOString(),
            since: null,
            version: "9.9.9",
            instance_id: "inst-9",
            uptime_seconds: 90,
            interval_hours: 1,
            counts: { projects: 1, probes: 0 },
            runner: { runs: 12, failures: 2, slip_p99_ms: 35 },
          });
          // Runner figures cover the time since the previous report (the start, before the first).
          assert.deepEqual(asked, [started, new Date(started.getTime() + 90_000)]);
          assert.equal(second?.report.since, first?.report.time);
          // The outbox holds the report as built.
          assert.deepEqual(await queued(handle.db), [first?.report, second?.report]);
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step("a report goes without runner figures when the runner has none", async () => {
      const handle = await freshState();
      const reporter = reporterOn(handle, new ManualClock(), [], {
        runnerFigures: () => Promise.reject(new Error("runner is down")),
      });
      try {
        const { report } = await reporter.sendTest();
        assert.equal("runner" in report, false);
        await updateIamAlive({ db: handle.db, input: { channels: ["log"] } });
        const queuedReport = await reporter.runDue();
        assert.ok(queuedReport);
        assert.equal("runner" in queuedReport.report, false);
      } finally {
        await reporter.stop();
      }
    });

    await t.step(
      "start-up warns about each selected channel that lacks configuration",
      async () => {
        const handle = await freshState();
        const lines: string[] = [];
        const clock = new ManualClock();
        const reporter = createReporter({
          db: handle.db,
          log: createLogger("warn", (line) => lines.push(line)),
          // The real channels: a webhook without a secret, no mail settings.
          channels: createChannels({ config: { webhook: { url: "http://127.0.0.1:9/" } }, clock }),
          clock,
        });
        try {
          await handle.db.updateTable("iam_alive_settings")
            .set({ channels: sqlJson(["log", "webhook", "mail"]) }).execute();
          await reporter.start();
          const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === "warn");
          assert.deepEqual(warnings.map((w) => [w.msg, w.channel, w.missing]), [
            [
              "I'm alive webhook channel: IAM_ALIVE_WEBHOOK_SECRET is not set: webhook bodies go unsigned",
              "webhook",
              undefined,
            ],
            [
              "I'm alive channel is selected but not configured",
              "mail",
              ["SMTP_URL", "MAIL_FROM", "MAIL_TO"],
            ],
          ]);
          assert.equal(warnings[1].enabled, false);
        } finally {
          await reporter.stop();
        }
      },
    );

    await database.close();
  });
}

Deno.test({
  name: "I'm alive: two instances on one PostgreSQL queue one report per interval between them",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const handles: DatabaseHandle[] = [];
    const reporters: Harness[] = [];
    try {
      for (let i = 0; i < 2; i++) handles.push(await openDatabase({ kind: "postgres", url }));
      await migrateToLatest(handles[0].db);
      const db = handles[0].db;
      const clock = new ManualClock();
      const sent: Sent[] = [];
      for (const [i, handle] of handles.entries()) {
        reporters.push(reporterOn(handle, clock, sent, { instanceId: `instance-${i}` }));
      }
      await updateIamAlive({ db, input: { interval_hours: 1, channels: ["log", "webhook"] } });
      await Promise.all(reporters.map((r) => r.start()));
      await clock.sleepsReach(2);
      assert.equal((await queued(db)).length, 1);
      for (let i = 1; i <= 6 * 6; i++) {
        await step(clock, POLL, 2);
        assert.equal((await queued(db)).length, 1 + Math.floor((i * POLL) / HOUR), `after ${i}`);
      }
      assert.deepEqual((await queued(db)).map((r) => r.sequence), [1, 2, 3, 4, 5, 6, 7]);

      // Both wake at once many times: the claim, not luck, keeps it to one.
      for (let i = 0; i < 20; i++) {
        await handles[i % 2].db.updateTable("iam_alive_settings").set({ next_report_at: null })
          .execute();
        const before = clock.sleeps;
        reporters.forEach((r) => r.wake());
        await clock.sleepsReach(before + 2);
      }
      for (const channel of ["log", "webhook"] as const) {
        const sequences = (await queued(db, channel)).map((r) => r.sequence);
        assert.deepEqual(sequences, Array.from({ length: 27 }, (_, i) => i + 1), channel);
      }

      // Two deliverers at once send each message once between them.
      const [a, b] = await Promise.all(reporters.map((r) => r.deliver()));
      assert.equal(a + b, 2 * 27);
      for (const channel of ["log", "webhook"] as const) {
        const sequences = sent.filter((s) => s.channel === channel).map((s) => s.report.sequence);
        assert.equal(sequences.length, 27, channel);
        assert.equal(new Set(sequences).size, 27, channel);
      }
      assert.ok(
        (await outbox(db)).every((m) => m.status === "delivered" && m.attempts === 1),
        "every message delivered at the first attempt",
      );
    } finally {
      await Promise.all(reporters.map((r) => r.stop()));
      await Promise.all(handles.map((h) => h.close()));
      await drop();
    }
  },
});
