/**
 * The runner's adaptive claim window and its behaviour when overloaded, on a fake
 * clock with an executor whose runs take fake time: no lease runs out while its runner holds
 * the run, no slot is made twice, the window grows with fast runs and shrinks with slow ones,
 * and the overload warning comes at most once a minute, with its metric.
 */
import assert from "node:assert/strict";
import { fakeClock } from "../testing/runner_clock.ts";
import { Registry } from "prom-client";
import { sql } from "kysely";
import { createLogger } from "../base/log.ts";
import { backends, startTestApp, TestClient, uniqueName } from "../testing/app.ts";
import { createNetworkPolicy } from "../base/outbound/network_policy.ts";
import { runnerMetrics } from "../operations/metrics/runner.ts";
import { scrapeReads } from "../operations/metrics/registry.ts";
import { claimDue, syncSchedules } from "./store.ts";
import { gridAfter, offsetOf } from "../domain/schedule.ts";
import {
  claimWindow,
  type Clock,
  createRunner,
  leaseFor,
  type Runner,
  type RunnerOptions,
} from "./runner.ts";
import type { ProbeTarget, RunResult } from "./execute.ts";

const INTERVAL = 60_000;
const TIMEOUT = 1_000;
const LEASE = leaseFor(TIMEOUT);

/**
 * An executor whose runs take `runMs()` of fake time; counts the runs made (ended) per target
 * URL.
 */
function slowExecutor(clock: Clock, runMs: () => number) {
  const made = new Map<string, number>();
  const execute = (target: ProbeTarget) => {
    const startedAt = new Date(clock.now());
    const ms = runMs();
    return new Promise<RunResult>((resolve) =>
      clock.setTimeout(() => {
        made.set(target.url, (made.get(target.url) ?? 0) + 1);
        resolve({
          startedAt,
          durationMs: ms,
          outcome: "up",
          httpStatus: 200,
          error: null,
          address: null,
        });
      }, ms)
    );
  };
  return { made, execute };
}

/** A logger of warnings and errors into `lines`. */
const warnLog = (lines: string[]) => createLogger("warn", (line) => lines.push(line));

Deno.test("claimWindow: twice the slots at first, grows with the rate, bounded by what can start", () => {
  const base = { concurrency: 10, coverMs: 10_000, startWithinMs: 10_000, maxClaimed: 100_000 };
  assert.equal(claimWindow({ ...base, rate: 0, runMs: null, recordMs: null }), 20);
  assert.equal(claimWindow({ ...base, rate: 1000, runMs: 5, recordMs: 0.1 }), 10_000);
  assert.equal(claimWindow({ ...base, coverMs: 2000, rate: 1000, runMs: 5, recordMs: 0.1 }), 2000);
  // Runs of 5 s: ten slots start 20 runs in 10 s, whatever the rate asks for.
  assert.equal(claimWindow({ ...base, rate: 1000, runMs: 5000, recordMs: 0.1 }), 20);
  // Recording at 10 ms a run: 1,000 runs recorded in 10 s.
  assert.equal(claimWindow({ ...base, rate: 1000, runMs: 5, recordMs: 10 }), 1000);
  assert.equal(claimWindow({ ...base, rate: 1e9, runMs: 1, recordMs: 0.001 }), 100_000);
  assert.equal(claimWindow({ ...base, rate: 0, runMs: 1e9, recordMs: null }), 1);
});

for (const backend of backends()) {
  Deno.test(`adaptive runner [${backend}]`, async (t) => {
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    const db = app.database.db;
    const start = Math.ceil(Date.now() / INTERVAL) * INTERVAL + 30 * 86_400_000;

    /** A project of `n` probes; returns it. */
    const projectOf = async (n: number) => {
      const project = uniqueName();
      await api.post("/api/v1/projects", { project });
      for (let i = 0; i < n; i++) {
        const res = await api.post(`/api/v1/projects/${project}/probes`, {
          url: `http://127.0.0.1:9/${project}/${i}`,
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
      return project;
    };
    /** Results recorded per probe URL. */
    const recordedPerUrl = async (project: string) => {
      const rows = await db.selectFrom("probe_results")
        .innerJoin("probes", "probes.key", "probe_results.probe_key")
        .where("probes.project", "=", project)
        .select(["probes.url", (eb) => eb.fn.countAll<number>().as("n")])
        .groupBy("probes.url").execute();
      return new Map(rows.map((r) => [r.url, Number(r.n)]));
    };
    /** Schedule rows still leased to a runner whose lease has run out at `now`. */
    const expiredLeases = async (now: number) => {
      const { rows: [r] } = await sql<{ n: number }>`
        select count(*)::int as n from probe_schedule
        where leased_by is not null and lease_until <= ${new Date(now).toISOString()}`
        .execute(db);
      return r.n;
    };
    /** One second of fake time: each runner claims, runs go on, each records and ticks. */
    const second = async (fake: ReturnType<typeof fakeClock>["fake"], rs: Runner[]) => {
      for (const r of rs) await r.poll();
      await fake.tickAsync(1000);
      await new Promise((r) => setTimeout(r, 0));
      for (const r of rs) {
        await r.flush();
        await r.tick();
      }
    };

    /**
     * A runner on `clock` with the tests' interval and timeout, no lookahead and (unless told)
     * no restart spread; silent unless given a log.
     */
    const runnerOn = (
      clock: Clock,
      execute: (target: ProbeTarget) => Promise<RunResult>,
      options: Partial<RunnerOptions> & { concurrency: number },
    ) =>
      createRunner({
        db,
        log: createLogger("silent"),
        clock,
        intervalMs: INTERVAL,
        timeoutMs: TIMEOUT,
        retentionDays: 7,
        policy: createNetworkPolicy(),
        lookaheadMs: 0,
        restartSpreadMs: 0,
        execute,
        ...options,
      });

    try {
      await t.step(
        "the overview and /metrics say how far behind the schedule is, for every runner",
        async () => {
          const project = await projectOf(1);
          const registry = new Registry();
          runnerMetrics(registry, { db, reads: scrapeReads(registry, createLogger("silent")) });
          const lag = async () => {
            const res = await api.get("/api/v1/overview");
            assert.equal(res.status, 200);
            const gauge = await registry.getSingleMetric("runner_schedule_lag_seconds")!.get();
            return { ...res.body.data.schedule, gauge: gauge.values[0].value };
          };
          assert.deepEqual(await lag(), { lag_seconds: 0, overloaded: false, gauge: 0 });
          // Due 30 s ago, claimed by no runner: the schedule is 30 s behind.
          await syncSchedules(db, { now: Date.now() - 30_000, intervalMs: INTERVAL });
          const behind = await lag();
          assert.ok(behind.lag_seconds >= 30 && behind.lag_seconds < 60, JSON.stringify(behind));
          assert.equal(behind.overloaded, true);
          assert.ok(behind.gauge >= 30);
          // Claimed: a runner has it, no longer counted.
          const now = Date.now();
          const claimed = await claimDue(db, {
            now,
            horizon: now,
            leaseUntil: now + LEASE,
            runner: "r",
            limit: 10,
          });
          assert.equal(claimed.length, 1);
          assert.deepEqual(await lag(), { lag_seconds: 0, overloaded: false, gauge: 0 });
          await api.delete(`/api/v1/projects/${project}`);
        },
      );

      await t.step(
        "two runners, runs longer than their lease: leases renewed, no slot made twice, none dropped",
        async () => {
          const { fake, clock } = fakeClock(start);
          const project = await projectOf(12);
          // Every run takes longer than a whole lease: only renewals keep it.
          const { made, execute } = slowExecutor(clock, () => LEASE + 5_000);
          const lines: string[] = [];
          const runnerOf = (id: string) =>
            runnerOn(clock, execute, { id, concurrency: 2, log: warnLog(lines) });
          const runners = [runnerOf("a"), runnerOf("b")];
          await runners[0].sync();
          for (let s = 0; s < 150; s++) {
            await second(fake, runners);
            assert.equal(await expiredLeases(clock.now()), 0, `a lease ran out at ${s} s`);
          }
          const recorded = await recordedPerUrl(project);
          assert.ok(made.size > 0);
          for (const [url, n] of made) {
            assert.equal(recorded.get(url) ?? 0, n, `${url}: made ${n}, recorded`);
          }
          for (const r of runners) {
            assert.equal(r.counters().lost, 0);
            assert.ok(r.counters().renewed > 0);
            // Runs of 15 s, 2 slots, 6 s to start a claim in: at most 2 + 2 × 6 / 15 claimed.
            assert.ok(r.counters().window <= 2, `window ${r.counters().window}`);
          }
          // 12 probes due at once, 4 slots, 15 s a run: the last start 30 s late or more.
          assert.ok(runners.some((r) => r.counters().overloaded));
          assert.ok(lines.some((l) => l.includes("runner overloaded")));
          await api.delete(`/api/v1/projects/${project}`);
        },
      );

      await t.step(
        "the window grows while runs are fast and shrinks when they turn slow",
        async () => {
          const { fake, clock } = fakeClock(start + 3 * 86_400_000);
          const project = await projectOf(400);
          let runMs = 10;
          const { made, execute } = slowExecutor(clock, () => runMs);
          const runner = runnerOn(clock, execute, { concurrency: 5 });
          await runner.sync();
          assert.equal(runner.counters().window, 10, "twice the slots to begin with");
          const windows: number[] = [];
          for (let s = 0; s < 4; s++) {
            await second(fake, [runner]);
            windows.push(runner.counters().window);
          }
          // 10 runs in the first second, then 60, then more: the window follows.
          assert.ok(windows[0] > 10, `windows ${windows}`);
          assert.ok(windows[2] > windows[0], `windows ${windows}`);
          runMs = 5_000;
          for (let s = 0; s < 60; s++) {
            await second(fake, [runner]);
            assert.equal(await expiredLeases(clock.now()), 0, `a lease ran out at ${s} s`);
          }
          // Five slots, 5 s a run, 6 s to start a claim in: 6 runs can start, no more.
          assert.ok(runner.counters().window <= 6, `window ${runner.counters().window}`);
          const recorded = await recordedPerUrl(project);
          for (const [url, n] of made) assert.equal(recorded.get(url) ?? 0, n, url);
          assert.equal(runner.counters().lost, 0);
          await api.delete(`/api/v1/projects/${project}`);
        },
      );

      await t.step(
        "overloaded: one warning a minute naming the lag and what to do; lag and flag in /metrics",
        async () => {
          const { fake, clock } = fakeClock(start + 6 * 86_400_000);
          const project = await projectOf(40);
          const { execute } = slowExecutor(clock, () => 2_000);
          const lines: string[] = [];
          const registry = new Registry();
          const metrics = runnerMetrics(registry);
          const runner = runnerOn(clock, execute, {
            concurrency: 1,
            log: warnLog(lines),
            observer: metrics.observer,
          });
          metrics.watch(runner);
          const gauge = async (name: string) =>
            (await registry.getSingleMetric(name)!.get()).values[0].value;
          await runner.sync();
          assert.equal(await gauge("runner_overloaded"), 0);
          const warnedAt: number[] = [];
          // 40 probes every minute, one slot, 2 s a run: 80 s of runs a minute.
          for (let s = 0; s < 150; s++) {
            const before = lines.length;
            await second(fake, [runner]);
            if (lines.length > before) warnedAt.push(s);
          }
          const warnings = lines.map((l) => JSON.parse(l)).filter((l) =>
            l.msg === "runner overloaded: probe runs start late"
          );
          assert.ok(warnings.length >= 2, lines.join("\n"));
          assert.equal(warnings.length, warnedAt.length, lines.join("\n"));
          assert.equal(runner.counters().overloadWarnings, warnings.length);
          for (let i = 1; i < warnedAt.length; i++) {
            assert.ok(warnedAt[i] - warnedAt[i - 1] >= 60, `warned at ${warnedAt}`);
          }
          assert.ok(warnings[0].behind_seconds >= 5, JSON.stringify(warnings[0]));
          assert.match(warnings[0].hint, /another runner/);
          assert.match(warnings[0].hint, /PROBE_INTERVAL_SECONDS/);
          assert.equal(runner.counters().overloaded, true);
          assert.equal(await gauge("runner_overloaded"), 1);
          assert.ok(await gauge("runner_lag_seconds") >= 5);
          // With nothing left to run, no longer behind.
          await api.delete(`/api/v1/projects/${project}`);
          for (let s = 0; s < 20; s++) await second(fake, [runner]);
          assert.equal(runner.counters().overloaded, false, JSON.stringify(runner.counters()));
          assert.equal(await gauge("runner_overloaded"), 0);
          assert.equal(await gauge("runner_lag_seconds"), 0);
        },
      );

      await t.step(
        "a restart's catch-up is not overload: runs overdue at start are spread, with no warning",
        async () => {
          const { fake, clock } = fakeClock(start + 9 * 86_400_000);
          const project = await projectOf(20);
          const { made, execute } = slowExecutor(clock, () => 10);
          const lines: string[] = [];
          const runner = runnerOn(clock, execute, {
            concurrency: 50,
            log: warnLog(lines),
            restartSpreadMs: 30_000,
          });
          await runner.sync();
          // Stopped for 70 s: every probe's run fell due on its grid before this runner started.
          const keys = await db.selectFrom("probes").select("key").where("project", "=", project)
            .execute();
          for (const { key } of keys) {
            const due = gridAfter(clock.now() - 70_000, offsetOf(key, INTERVAL), INTERVAL);
            await db.updateTable("probe_schedule").set({ next_due_at: new Date(due) })
              .where("probe_key", "=", key).execute();
          }
          const lags: number[] = [];
          for (let s = 0; s < 40; s++) {
            await second(fake, [runner]);
            lags.push(runner.counters().lagMs);
          }
          // Every overdue probe ran (a slot missed by less than an interval is made up at once,
          // and the next falls inside the 40 s), and none of the catch-up counted as lag.
          assert.equal(made.size, 20);
          assert.ok([...made.values()].every((n) => n <= 3), JSON.stringify([...made]));
          assert.ok(lags.every((ms) => ms < 5_000), `lag ${lags}`);
          assert.equal(runner.counters().overloaded, false);
          assert.equal(runner.counters().overloadWarnings, 0, lines.join("\n"));
          assert.ok(!lines.some((l) => l.includes("runner overloaded")), lines.join("\n"));
          await api.delete(`/api/v1/projects/${project}`);
        },
      );
    } finally {
      await app.close();
    }
  });
}
