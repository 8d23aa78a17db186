import type { IamAliveChannel, IamAliveReport } from "@probe/shared";
import assert from "node:assert/strict";
import { sql } from "kysely";
import { type DatabaseHandle, type Db, openDatabase } from "../db/database.ts";
import { json as sqlJson } from "../db/json.ts";
import { migrateToLatest } from "../db/migrator.ts";
import { listDeliveries } from "./store.ts";
import { updateIamAlive } from "../domain/settings.ts";
import { createLogger } from "../log.ts";
import type { DeliveryResult } from "../notify/delivery.ts";
import { type Backend, backends, createPostgresDatabase, freshDatabase } from "../testing/app.ts";
import { type Channel, type Channels, createChannels } from "./channels.ts";
import { ManualClock } from "../testing/manual_clock.ts";
import { createReporter, type ReporterOptions } from "./reporter.ts";

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

function reporterOn(
  handle: DatabaseHandle,
  clock: ManualClock,
  sent: Sent[],
  extra: Partial<ReporterOptions> = {},
) {
  return createReporter({
    db: handle.db,
    log: silent,
    channels: recordingChannels(sent),
    clock,
    pollMs: POLL,
    ...extra,
  });
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
      "one report goes out at once on enabling, then exactly one per interval",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const reporter = reporterOn(handle, clock, sent);
        try {
          const t0 = clock.now().getTime();
          await updateIamAlive({ db: handle.db, input: { interval_hours: 1, channels: ["log"] } });
          await reporter.start();
          await clock.sleepsReach(1);
          assert.equal(reports(sent).length, 1);
          for (let i = 1; i <= 3 * 6; i++) {
            await step(clock, POLL);
            assert.equal(
              reports(sent).length,
              1 + Math.floor((i * POLL) / HOUR),
              `after ${i} polls`,
            );
          }
          assert.deepEqual(
            reports(sent).map((r) => Date.parse(r.time) - t0),
            [0, HOUR, 2 * HOUR, 3 * HOUR],
          );
          assert.deepEqual(reports(sent).map((r) => r.sequence), [1, 2, 3, 4]);
          assert.deepEqual(reports(sent).map((r) => r.since && Date.parse(r.since) - t0), [
            null,
            0,
            HOUR,
            2 * HOUR,
          ]);
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step(
      "none goes out while disabled; enabling sends one at once; disabling stops them",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const reporter = reporterOn(handle, clock, sent);
        try {
          await reporter.start();
          await clock.sleepsReach(1);
          for (let i = 0; i < 30; i++) await step(clock, 2 * HOUR);
          assert.equal(sent.length, 0);

          // The PATCH wakes the reporter: the report goes out without time passing.
          const before = clock.sleeps;
          await updateIamAlive({ db: handle.db, input: { enabled: true } });
          reporter.wake();
          await clock.sleepsReach(before + 1);
          assert.equal(reports(sent).length, 1);
          // The default schedule: every 24 hours, over the log channel.
          assert.equal(reports(sent)[0].interval_hours, 24);

          await updateIamAlive({ db: handle.db, input: { enabled: false } });
          for (let i = 0; i < 30; i++) await step(clock, 2 * HOUR);
          assert.equal(reports(sent).length, 1);
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step("changing the interval or the channels sends one at once", async () => {
      const handle = await freshState();
      const clock = new ManualClock();
      const sent: Sent[] = [];
      const reporter = reporterOn(handle, clock, sent);
      try {
        await updateIamAlive({ db: handle.db, input: { interval_hours: 24, channels: ["log"] } });
        await reporter.start();
        await clock.sleepsReach(1);
        await step(clock, HOUR);
        assert.equal(reports(sent).length, 1);

        let before = clock.sleeps;
        await updateIamAlive({ db: handle.db, input: { interval_hours: 2 } });
        reporter.wake();
        await clock.sleepsReach(before + 1);
        assert.equal(reports(sent).length, 2);
        await step(clock, HOUR);
        assert.equal(reports(sent).length, 2);
        await step(clock, HOUR);
        assert.equal(reports(sent).length, 3);

        before = clock.sleeps;
        await updateIamAlive({ db: handle.db, input: { channels: ["log", "mail"] } });
        reporter.wake();
        await clock.sleepsReach(before + 1);
        assert.equal(reports(sent).length, 4);
        assert.deepEqual(sent.slice(-2).map((s) => s.channel).sort(), ["log", "mail"]);

        // Sending enabled alone while on changes nothing.
        before = clock.sleeps;
        await updateIamAlive({ db: handle.db, input: { enabled: true } });
        reporter.wake();
        await clock.sleepsReach(before + 1);
        assert.equal(reports(sent).length, 4);
      } finally {
        await reporter.stop();
      }
    });

    await t.step("a restart mid-interval sends none until the report is due", async () => {
      const handle = await freshState();
      const clock = new ManualClock();
      const sent: Sent[] = [];
      const first = reporterOn(handle, clock, sent);
      await updateIamAlive({ db: handle.db, input: { interval_hours: 2, channels: ["log"] } });
      await first.start();
      await clock.sleepsReach(1);
      await step(clock, HOUR);
      await first.stop();
      assert.equal(reports(sent).length, 1);

      const second = reporterOn(handle, clock, sent);
      try {
        const before = clock.sleeps;
        await second.start();
        await clock.sleepsReach(before + 1);
        assert.equal(reports(sent).length, 1, "the restart repeats no report");
        await step(clock, 50 * MINUTE);
        assert.equal(reports(sent).length, 1);
        await step(clock, 10 * MINUTE);
        assert.equal(reports(sent).length, 2, "the restart skips no report");
        assert.equal(reports(sent)[1].sequence, 2);
      } finally {
        await second.stop();
      }
    });

    await t.step(
      "after an outage longer than the interval one report goes out, not a backlog",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const first = reporterOn(handle, clock, sent);
        await updateIamAlive({ db: handle.db, input: { interval_hours: 1, channels: ["log"] } });
        const t0 = clock.now().getTime();
        await first.start();
        await clock.sleepsReach(1);
        await first.stop();

        clock.advance(50 * HOUR);
        const second = reporterOn(handle, clock, sent);
        try {
          const before = clock.sleeps;
          await second.start();
          await clock.sleepsReach(before + 1);
          assert.equal(reports(sent).length, 2);
          assert.equal(reports(sent)[1].since, new Date(t0).toISOString());
          await step(clock, 50 * MINUTE);
          assert.equal(reports(sent).length, 2);
          await step(clock, 10 * MINUTE);
          assert.equal(reports(sent).length, 3);
        } finally {
          await second.stop();
        }
      },
    );

    await t.step(
      "a failing channel stops none of the others and every outcome is recorded",
      async () => {
        const handle = await freshState();
        const clock = new ManualClock();
        const sent: Sent[] = [];
        const channels = recordingChannels(
          sent,
          (channel) =>
            channel === "webhook"
              ? { outcome: "failed", attempts: 5, error: "HTTP 503" }
              : { outcome: "delivered", attempts: 1 },
        );
        channels.mail = {
          missing: [],
          deliver: () => Promise.reject(new Error("a bug")),
        };
        const reporter = createReporter({
          db: handle.db,
          log: silent,
          channels,
          clock,
          instanceId: "inst-1",
        });
        try {
          await updateIamAlive({
            db: handle.db,
            input: { interval_hours: 1, channels: ["mail", "webhook", "log"] },
          });
          const result = await reporter.runDue();
          assert.ok(result);
          const byChannel = Object.fromEntries(result.deliveries.map((d) => [d.channel, d]));
          assert.equal(byChannel.log.outcome, "delivered");
          assert.equal(byChannel.webhook.outcome, "failed");
          assert.equal(byChannel.webhook.error, "HTTP 503");
          assert.equal(byChannel.mail.outcome, "failed");
          assert.equal(byChannel.mail.error, "unexpected error in the channel");

          const stored = await listDeliveries({ db: handle.db, input: { limit: 10 } });
          assert.deepEqual(
            stored.map((d) => [d.channel, d.outcome, d.attempts, d.sequence, d.instance_id]).sort(),
            [
              ["log", "delivered", 1, 1, "inst-1"],
              ["mail", "failed", 1, 1, "inst-1"],
              ["webhook", "failed", 5, 1, "inst-1"],
            ],
          );
          assert.equal(await reporter.runDue(), null, "the next report is not due yet");
        } finally {
          await reporter.stop();
        }
      },
    );

    await t.step(
      "a test report takes a number of its own and leaves the schedule alone",
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
        const started = clock.now();
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
  name: "I'm alive: two instances on one PostgreSQL send one report per interval between them",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const handles: DatabaseHandle[] = [];
    const reporters: ReturnType<typeof createReporter>[] = [];
    try {
      for (let i = 0; i < 2; i++) handles.push(await openDatabase({ kind: "postgres", url }));
      await migrateToLatest(handles[0].db);
      const clock = new ManualClock();
      const sent: Sent[] = [];
      for (const [i, handle] of handles.entries()) {
        reporters.push(reporterOn(handle, clock, sent, { instanceId: `instance-${i}` }));
      }
      await updateIamAlive({ db: handles[0].db, input: { interval_hours: 1, channels: ["log"] } });
      await Promise.all(reporters.map((r) => r.start()));
      await clock.sleepsReach(2);
      assert.equal(reports(sent).length, 1);
      for (let i = 1; i <= 6 * 6; i++) {
        await step(clock, POLL, 2);
        assert.equal(reports(sent).length, 1 + Math.floor((i * POLL) / HOUR), `after ${i} polls`);
      }
      assert.deepEqual(reports(sent).map((r) => r.sequence), [1, 2, 3, 4, 5, 6, 7]);

      // Both wake at once many times: the claim, not luck, keeps it to one.
      for (let i = 0; i < 20; i++) {
        await handles[i % 2].db.updateTable("iam_alive_settings").set({ next_report_at: null })
          .execute();
        const before = clock.sleeps;
        reporters.forEach((r) => r.wake());
        await clock.sleepsReach(before + 2);
      }
      assert.equal(reports(sent).length, 7 + 20);
      const sequences = reports(sent).map((r) => r.sequence);
      assert.equal(new Set(sequences).size, sequences.length);
    } finally {
      await Promise.all(reporters.map((r) => r.stop()));
      await Promise.all(handles.map((h) => h.close()));
      await drop();
    }
  },
});
