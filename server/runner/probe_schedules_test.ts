/**
 * Schedules per probe: each probe runs on its own interval and with its own timeout,
 * and changing them moves its next due time without a burst or a gap longer than the new
 * interval. On both databases.
 */
import assert from "node:assert/strict";
import { fakeClock } from "../testing/runner_clock.ts";
import { createLogger } from "../base/log.ts";
import { backends, startTestApp, TestClient, uniqueName } from "../testing/app.ts";
import { createNetworkPolicy, parseNetworks } from "../base/outbound/network_policy.ts";
import { type Clock, createRunner, type RunnerOptions } from "./runner.ts";
import { gridAfter, offsetOf } from "../domain/schedule.ts";
import { claimDue } from "./store.ts";
import type { ProbeTarget, RunResult } from "./execute.ts";
import { startTarget } from "../testing/target_server.ts";
import { createProbe, updateProbe } from "../domain/probes.ts";
import { createWorkerExecutor } from "./worker_executor.ts";

const loopback = createNetworkPolicy(parseNetworks("127.0.0.0/8"));
/** The runner's (service-wide) interval in these tests: the probes' default. */
const DEFAULT_INTERVAL = 60_000;

for (const backend of backends()) {
  Deno.test(`probe schedules [${backend}]`, async (t) => {
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    const db = app.database.db;
    const target = await startTarget();
    /** Every fake run: what was run, when (fake time). */
    const runs: { target: ProbeTarget; at: number }[] = [];
    const runnerWith = (clock: Clock, over: Partial<RunnerOptions> = {}) =>
      createRunner({
        db,
        log: createLogger("silent"),
        intervalMs: DEFAULT_INTERVAL,
        timeoutMs: 2_000,
        concurrency: 20,
        retentionDays: 7,
        policy: loopback,
        lookaheadMs: 0,
        restartSpreadMs: 0,
        clock,
        execute: (probe): Promise<RunResult> => {
          runs.push({ target: probe, at: clock.now() });
          return Promise.resolve({
            startedAt: new Date(clock.now()),
            durationMs: 1,
            outcome: "up",
            httpStatus: 200,
            error: null,
            address: null,
          });
        },
        ...over,
      });
    const newProject = async () => {
      const project = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      return project;
    };
    const create = async (project: string, body: Record<string, unknown>) => {
      const res = await api.post(`/api/v1/projects/${project}/probes`, body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const probeId: string = res.body.data.probe_id;
      const { key } = await db.selectFrom("probes").select("key")
        .where("project", "=", project).where("probe_id", "=", probeId)
        .executeTakeFirstOrThrow();
      return { probeId, key: String(key) };
    };
    const dueTimes = async (key: string) =>
      (await db.selectFrom("probe_results").select("due_at").where("probe_key", "=", key)
        .orderBy("due_at").execute()).map((r) => new Date(r.due_at).getTime());
    const schedule = async (key: string) => {
      const row = await db.selectFrom("probe_schedule").select(["next_due_at", "due_by"])
        .where("probe_key", "=", key).executeTakeFirstOrThrow();
      return {
        next: new Date(row.next_due_at).getTime(),
        dueBy: row.due_by === null ? null : new Date(row.due_by).getTime(),
      };
    };
    /** Steps fake time to `until` by `step` ms, claiming and finishing what is due at each. */
    const runUntil = async (
      runner: ReturnType<typeof runnerWith>,
      fake: ReturnType<typeof fakeClock>["fake"],
      until: number,
      step = 1_000,
    ) => {
      while (fake.now < until) {
        fake.tick(Math.min(step, until - fake.now));
        await runner.poll();
        await runner.idle();
      }
    };
    /** Each step's probes go with their project, so that later steps' runners never see them. */
    const done = (project: string) => api.delete(`/api/v1/projects/${project}`);

    try {
      await t.step(
        "reads show a probe's own interval and timeout; null is the default",
        async () => {
          const p = await newProject();
          const url = `${target.origin}/ok`;
          const own = await create(p, { url, interval_seconds: 10, timeout_ms: 500 });
          const read = async (id: string) =>
            (await api.get(`/api/v1/projects/${p}/probes/${id}`)).body.data;
          assert.deepEqual(
            [(await read(own.probeId)).interval_seconds, (await read(own.probeId)).timeout_ms],
            [10, 500],
          );
          // PATCH sets one and keeps the other; null goes back to the service-wide setting.
          const patched = await api.patch(`/api/v1/projects/${p}/probes/${own.probeId}`, {
            interval_seconds: 86_400,
          });
          assert.equal(patched.status, 200);
          assert.equal(patched.body.data.probe_id, own.probeId, "probe_id follows method and URL");
          let probe = await read(own.probeId);
          assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [86_400, 500]);
          await api.patch(`/api/v1/projects/${p}/probes/${own.probeId}`, { timeout_ms: null });
          probe = await read(own.probeId);
          assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [86_400, null]);
          // A rewrite (create on the same URL) replaces the whole definition: not sent is default.
          const rewrite = await api.post(`/api/v1/projects/${p}/probes`, { url, timeout_ms: 100 });
          assert.equal(rewrite.status, 200);
          probe = await read(own.probeId);
          assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [null, 100]);
          // The other create path takes them too, and lists show them.
          const other = await api.post("/api/v1/probes", {
            project: p,
            url: `${target.origin}/other`,
            interval_seconds: 120,
          });
          assert.equal(other.status, 201);
          const listed = (await api.get(`/api/v1/projects/${p}/probes`)).body.data;
          assert.deepEqual(
            listed.map((x: Record<string, unknown>) => [
              x.url,
              x.interval_seconds,
              x.timeout_ms,
              x.effective_interval_seconds,
              x.effective_timeout_ms,
            ]),
            [
              [`${target.origin}/ok`, null, 100, 60, 100],
              [`${target.origin}/other`, 120, null, 120, 10_000],
            ],
          );
          await done(p);
        },
      );

      await t.step("bad intervals and timeouts answer 422 naming the field", async () => {
        const p = await newProject();
        const url = "http://schedules.test/";
        const { probeId } = await create(p, { url });
        const bad: [Record<string, unknown>, string][] = [
          [{ interval_seconds: 9 }, "interval_seconds"],
          [{ interval_seconds: 86_401 }, "interval_seconds"],
          [{ interval_seconds: 10.5 }, "interval_seconds"],
          [{ interval_seconds: "60" }, "interval_seconds"],
          [{ interval_seconds: 0 }, "interval_seconds"],
          [{ timeout_ms: 99 }, "timeout_ms"],
          [{ timeout_ms: 120_001 }, "timeout_ms"],
          [{ timeout_ms: 1.5 }, "timeout_ms"],
          [{ timeout_ms: true }, "timeout_ms"],
        ];
        for (const [fields, path] of bad) {
          for (
            const res of [
              await api.post(`/api/v1/projects/${p}/probes`, { url: `${url}new`, ...fields }),
              await api.post("/api/v1/probes", { project: p, url: `${url}new`, ...fields }),
              await api.patch(`/api/v1/projects/${p}/probes/${probeId}`, fields),
            ]
          ) {
            assert.equal(res.status, 422, JSON.stringify(fields));
            assert.equal(res.body.error.code, "validation_failed");
            assert.ok(
              res.body.error.details.some((d: { path: string }) => d.path === path),
              JSON.stringify(res.body.error.details),
            );
          }
        }
        assert.equal((await api.get(`/api/v1/projects/${p}/probes`)).body.meta.count, 1);
        const probe = (await api.get(`/api/v1/projects/${p}/probes/${probeId}`)).body.data;
        assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [null, null], "unchanged");
        await done(p);
      });

      await t.step("a 10 s and a 60 s probe run at their own rates in one runner", async () => {
        const p = await newProject();
        const fast = await create(p, { url: `${target.origin}/fast`, interval_seconds: 10 });
        const slow = await create(p, { url: `${target.origin}/slow`, interval_seconds: 60 });
        const deflt = await create(p, { url: `${target.origin}/default` });
        const start = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3_600_000;
        const { fake, clock } = fakeClock(start);
        const runner = runnerWith(clock);
        assert.equal(await runner.sync(), 3);
        await runUntil(runner, fake, start + 180_000);
        const check = (due: number[], interval: number, key: string) => {
          assert.equal(due[0], start, "a new probe runs at once");
          for (let i = 1; i < due.length; i++) {
            assert.equal((due[i] - offsetOf(key, interval)) % interval, 0, "on its own grid");
            assert.ok(due[i] - due[i - 1] <= interval && due[i] > due[i - 1]);
            if (i > 1) assert.equal(due[i] - due[i - 1], interval);
          }
          // One run at the start, then one per interval for 180 s.
          assert.equal(due.length, 1 + 180_000 / interval);
        };
        check(await dueTimes(fast.key), 10_000, fast.key);
        check(await dueTimes(slow.key), 60_000, slow.key);
        check(await dueTimes(deflt.key), DEFAULT_INTERVAL, deflt.key);
        assert.equal(runner.counters().lost, 0);
        await done(p);
      });

      await t.step(
        "changing the interval mid-schedule: no burst, no gap longer than the new interval",
        async () => {
          const p = await newProject();
          const probe = await create(p, { url: `${target.origin}/change`, interval_seconds: 3600 });
          const start = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 10 * 3_600_000;
          const { fake, clock } = fakeClock(start);
          const runner = runnerWith(clock);
          await runner.sync();
          await runUntil(runner, fake, start + 5_000);
          assert.deepEqual(await dueTimes(probe.key), [start]);
          const hourly = (await schedule(probe.key)).next;
          assert.equal(hourly, gridAfter(start, offsetOf(probe.key, 3_600_000), 3_600_000));

          // Shorter: due within one new interval, on the new grid; then every 10 s, never more.
          const changedAt = fake.now;
          await updateProbe({
            db,
            input: { project: p, probeId: probe.probeId, interval_seconds: 10 },
            now: () => fake.now,
          });
          const moved = (await schedule(probe.key)).next;
          assert.equal(moved, gridAfter(changedAt, offsetOf(probe.key, 10_000), 10_000));
          assert.ok(moved > changedAt && moved <= changedAt + 10_000);
          await runUntil(runner, fake, changedAt + 60_000);
          const after = (await dueTimes(probe.key)).slice(1);
          assert.equal(after.length, 6, "one run per new interval: no burst");
          assert.equal(after[0], moved);
          for (let i = 1; i < after.length; i++) assert.equal(after[i] - after[i - 1], 10_000);

          // Longer: the run already due stays, then the probe is on the hourly grid.
          const due = (await schedule(probe.key)).next;
          await updateProbe({
            db,
            input: { project: p, probeId: probe.probeId, interval_seconds: 3600 },
            now: () => fake.now,
          });
          assert.equal((await schedule(probe.key)).next, due, "the run already due stays");
          await runUntil(runner, fake, due);
          const ran = await dueTimes(probe.key);
          assert.equal(ran.at(-1), due);
          const next = (await schedule(probe.key)).next;
          assert.equal(next, gridAfter(due, offsetOf(probe.key, 3_600_000), 3_600_000));
          assert.ok(next - due <= 3_600_000);

          // Back to the service-wide interval (null): within 60 s, on its grid.
          const backAt = fake.now;
          await updateProbe({
            db,
            input: { project: p, probeId: probe.probeId, interval_seconds: null },
            now: () => fake.now,
          });
          assert.equal(
            (await schedule(probe.key)).next,
            gridAfter(backAt, offsetOf(probe.key, DEFAULT_INTERVAL), DEFAULT_INTERVAL),
          );
          // A rewrite (create on the same URL) with another interval moves it the same way.
          const rewriteAt = fake.now;
          // Due far ahead (as on a long interval), so that the move shows.
          await db.updateTable("probe_schedule")
            .set({ next_due_at: new Date(rewriteAt + 3_600_000).toISOString() })
            .where("probe_key", "=", probe.key).execute();
          const rewritten = await createProbe({
            db,
            input: { project: p, url: `${target.origin}/change`, interval_seconds: 10 },
            now: () => fake.now,
          });
          assert.equal(rewritten.created, false);
          assert.equal(
            (await schedule(probe.key)).next,
            gridAfter(rewriteAt, offsetOf(probe.key, 10_000), 10_000),
          );
          // The timeout alone leaves the schedule as it is.
          const before = await schedule(probe.key);
          await updateProbe({
            db,
            input: { project: p, probeId: probe.probeId, timeout_ms: 300 },
            now: () => fake.now,
          });
          assert.deepEqual(await schedule(probe.key), before);
          assert.equal(runner.counters().lost, 0);
          await done(p);
        },
      );

      await t.step(
        "an interval change while a run is leased: the run is recorded, then the new grid",
        async () => {
          const p = await newProject();
          const probe = await create(p, { url: `${target.origin}/leased`, interval_seconds: 3600 });
          const start = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 20 * 3_600_000;
          const { fake, clock } = fakeClock(start);
          const runner = runnerWith(clock, { lookaheadMs: 30_000 });
          await runner.sync();
          await runUntil(runner, fake, start + 1_000);
          const due = (await schedule(probe.key)).next;
          // Claimed ahead of its due time: leased, waiting.
          fake.setSystemTime(due - 20_000);
          assert.equal(await runner.poll(), 1);
          const changedAt = fake.now;
          await updateProbe({
            db,
            input: { project: p, probeId: probe.probeId, interval_seconds: 10 },
            now: () => fake.now,
          });
          const leased = await schedule(probe.key);
          assert.equal(leased.next, due, "the leased run keeps its due time");
          const newGrid = gridAfter(due, offsetOf(probe.key, 10_000), 10_000);
          assert.equal(leased.dueBy, newGrid);
          assert.ok(changedAt < due);
          fake.tick(20_000);
          await runner.idle();
          assert.equal(runner.counters().lost, 0, "the leased run was recorded");
          assert.deepEqual((await dueTimes(probe.key)).slice(-1), [due]);
          assert.deepEqual(await schedule(probe.key), { next: newGrid, dueBy: null });
          await done(p);
        },
      );

      await t.step(
        "each run carries its probe's timeout; the runner's when it has none",
        async () => {
          const p = await newProject();
          const own = await create(p, { url: `${target.origin}/own-timeout`, timeout_ms: 300 });
          const deflt = await create(p, { url: `${target.origin}/default-timeout` });
          const now = Date.now() + 40 * 3_600_000;
          await db.insertInto("probe_schedule").values([
            { probe_key: own.key, next_due_at: new Date(now).toISOString() },
            { probe_key: deflt.key, next_due_at: new Date(now).toISOString() },
          ]).execute();
          const claimed = await claimDue(db, {
            now,
            horizon: now,
            leaseUntil: now + 60_000,
            runner: "t",
            limit: 10,
            defaults: { intervalMs: 30_000, timeoutMs: 4_000 },
          });
          const byKey = new Map(claimed.map((c) => [c.key, c]));
          assert.deepEqual(
            [byKey.get(own.key)?.timeoutMs, byKey.get(own.key)?.target.timeoutMs],
            [300, 300],
          );
          assert.deepEqual(
            [byKey.get(deflt.key)?.timeoutMs, byKey.get(deflt.key)?.target.timeoutMs],
            [4_000, 4_000],
          );
          assert.equal(byKey.get(own.key)?.intervalMs, 30_000);
          await done(p);
        },
      );

      await t.step(
        "executing honours the probe's timeout, in the runner and its worker",
        async () => {
          const p = await newProject();
          const short = await create(p, {
            url: `${target.origin}/slow?ms=1500`,
            timeout_ms: 300,
          });
          const long = await create(p, { url: `${target.origin}/slow?ms=600` });
          // Real execution (no `execute` given): the runner's own timeout is 5 s.
          const runner = createRunner({
            db,
            log: createLogger("silent"),
            intervalMs: DEFAULT_INTERVAL,
            timeoutMs: 5_000,
            concurrency: 4,
            retentionDays: 7,
            policy: loopback,
            lookaheadMs: 0,
            retryPauseMs: 1,
          });
          await runner.sync();
          assert.equal(await runner.poll(), 2);
          await runner.idle();
          const outcome = async (key: string) =>
            await db.selectFrom("probe_results").select(["outcome", "error"])
              .where("probe_key", "=", key).executeTakeFirstOrThrow();
          const timedOut = await outcome(short.key);
          assert.equal(timedOut.outcome, "down");
          assert.match(timedOut.error ?? "", /timeout after 300 ms/);
          assert.equal((await outcome(long.key)).outcome, "up", "the runner's 5 s timeout");

          // Run-now too (its executor's timeout is 5 s in test apps).
          const runNow = async (probeId: string) =>
            (await api.post(`/api/v1/projects/${p}/probes/${probeId}/run`)).body.data;
          const cutNow = await runNow(short.probeId);
          assert.equal(cutNow.outcome, "down");
          assert.match(cutNow.error ?? "", /timeout after 300 ms/);
          assert.equal((await runNow(long.probeId)).outcome, "up");

          const worker = createWorkerExecutor({ allowNetworks: ["127.0.0.0/8"], timeoutMs: 5_000 });
          try {
            const base = { method: "GET", headers: {}, body: null, latency: null, expect: null };
            const cut = await worker.execute({
              ...base,
              url: `${target.origin}/slow?ms=1500`,
              timeoutMs: 300,
            });
            assert.equal(cut.outcome, "down");
            assert.match(cut.error ?? "", /timeout after 300 ms/);
            const whole = await worker.execute({ ...base, url: `${target.origin}/slow?ms=600` });
            assert.equal(whole.outcome, "up");
          } finally {
            worker.close();
          }
          await done(p);
        },
      );
    } finally {
      await target.close();
      await app.close();
    }
  });
}
