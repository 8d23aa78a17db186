/**
 * Run slots shared fairly, so one slow host cannot starve the rest: slow-drip targets hold at most
 * their host's share of the slots while fast probes beside them stay on time; and after a restart
 * the overdue probes start spread over part of the interval, each at its own point, not all at
 * once. Probes are made through the API; runs go to loopback targets; due and start times are read
 * back.
 */
import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { createLogger } from "../base/log.ts";
import { backends, startTestApp, TestClient, uniqueName } from "../testing/app.ts";
import { createNetworkPolicy, parseNetworks } from "../base/outbound/network_policy.ts";
import { type Clock, createRunner, type RunnerOptions } from "./runner.ts";
import { restartDelay } from "../domain/schedule.ts";
import { syncSchedules } from "./store.ts";
import { startTarget } from "../testing/target_server.ts";

const loopback = createNetworkPolicy(parseNetworks("127.0.0.0/8"));

for (const backend of backends()) {
  Deno.test(`run slots [${backend}]`, async (t) => {
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    const db = app.database.db;
    const slow = await startTarget();
    const fast = await startTarget();
    const runnerWith = (over: Partial<RunnerOptions>) =>
      createRunner({
        db,
        log: createLogger("silent"),
        intervalMs: 60_000,
        timeoutMs: 5_000,
        concurrency: 8,
        retentionDays: 7,
        policy: loopback,
        retryPauseMs: 1,
        ...over,
      });
    const probesOf = async (project: string) =>
      (await db.selectFrom("probes").select(["key", "url"]).where("project", "=", project)
        .execute()).map((p) => ({ key: String(p.key), url: p.url }));

    try {
      await t.step(
        "slow-drip probes hold at most their host's share of slots; fast ones beside them stay on time",
        async () => {
          const INTERVAL = 3_000;
          const project = uniqueName();
          await api.post("/api/v1/projects", { project });
          // 24 probes whose target sends its body a byte at a time over 1.5 s: 12 slots' worth
          // each interval, more than the runner's 8.
          for (let i = 0; i < 24; i++) {
            const res = await api.post(`/api/v1/projects/${project}/probes`, {
              url: `${slow.origin}/drip?ms=1500&bytes=10&i=${i}`,
            });
            assert.equal(res.status, 201);
          }
          for (let i = 0; i < 4; i++) {
            await api.post(`/api/v1/projects/${project}/probes`, {
              url: `${fast.origin}/ok?i=${i}`,
            });
          }
          // Every probe on its grid from the start (as after the first run), not all due at once.
          await syncSchedules(db, { now: Date.now(), intervalMs: INTERVAL, first: "grid" });
          const runner = runnerWith({
            intervalMs: INTERVAL,
            hostConcurrency: 2,
            pollMs: 20,
            lookaheadMs: 200,
            flushEveryMs: 50,
            syncEveryMs: 60_000,
          });
          const from = Date.now();
          runner.start();
          await new Promise((r) => setTimeout(r, 3 * INTERVAL));
          await runner.stop();

          const probes = await probesOf(project);
          const keysAt = (origin: string) =>
            probes.filter((p) => p.url.startsWith(origin)).map((p) => p.key);
          const runs = (keys: string[]) =>
            db.selectFrom("probe_results").select(["due_at", "started_at"])
              .where("probe_key", "in", keys).where("due_at", ">=", new Date(from)).execute();
          const fastRuns = await runs(keysAt(fast.origin));
          const slips = fastRuns.map((r) =>
            new Date(r.started_at).getTime() - new Date(r.due_at).getTime()
          );
          assert.ok(fastRuns.length >= 8, `fast probes ran each interval: ${fastRuns.length}`);
          // On main the slow host took every slot and the fast runs waited 1.5-5 s.
          assert.ok(Math.max(...slips) < 1_000, `fast runs started late: ${slips.join(", ")} ms`);
          assert.ok(slow.drips.peak <= 2, `slow host had ${slow.drips.peak} runs in flight`);
          // The slow ones queue rather than vanish: they ran, and the rest were given back.
          assert.ok((await runs(keysAt(slow.origin))).length >= 4);
          assert.ok(runner.counters().deferred > 0);
          await api.delete(`/api/v1/projects/${project}`);
        },
      );

      await t.step(
        "a run that waited for its host's slot keeps its lease: it is not claimed and run again",
        async () => {
          const project = uniqueName();
          await api.post("/api/v1/projects", { project });
          const paths = ["/slow?ms=2500&lease=1", "/slow?ms=2500&lease=2"];
          for (const path of paths) {
            await api.post(`/api/v1/projects/${project}/probes`, { url: `${slow.origin}${path}` });
          }
          // One run at a time against the host; a lease shorter than a wait and a run together
          // (2.5 s + 2.5 s against 4 s), renewed at its half and when the run starts. A day's
          // interval: with a minute's, a probe's next grid point fell inside the step's ~9 s one
          // time in three and was a third request of a slot of its own (seen in CI).
          const runner = runnerWith({
            intervalMs: 86_400_000,
            hostConcurrency: 1,
            leaseMs: 4_000,
            pollMs: 100,
            lookaheadMs: 0,
            flushEveryMs: 20,
            syncEveryMs: 1_000,
          });
          const before = slow.counts.get("/slow") ?? 0;
          runner.start();
          try {
            const probes = await probesOf(project);
            for (let i = 0; i < 200; i++) {
              const done = await db.selectFrom("probe_results").select("probe_key")
                .where("probe_key", "in", probes.map((p) => p.key)).execute();
              if (done.length >= 2) break;
              await new Promise((r) => setTimeout(r, 50));
            }
            // Time for a second claim of the run that waited, had its lease run out meanwhile.
            await new Promise((r) => setTimeout(r, 4_000));
          } finally {
            await runner.stop();
          }
          // On main the queued run's lease ran out while it ran: claimed again, run twice.
          const slots = await db.selectFrom("probe_results").select(["probe_key", "due_at"])
            .where("probe_key", "in", (await probesOf(project)).map((p) => p.key)).execute();
          assert.equal(slots.length, 2, `one due run each: ${JSON.stringify(slots)}`);
          assert.notEqual(String(slots[0].probe_key), String(slots[1].probe_key));
          assert.equal((slow.counts.get("/slow") ?? 0) - before, 2, "each due run sent once");
          assert.equal(runner.counters().recorded, 2);
          assert.equal(runner.counters().lost, 0);
          await api.delete(`/api/v1/projects/${project}`);
        },
      );

      await t.step(
        "after a restart, overdue probes start spread over half the interval, each at its own point",
        async () => {
          const INTERVAL = 60_000;
          const SPREAD = 30_000;
          const project = uniqueName();
          await api.post("/api/v1/projects", { project });
          for (let i = 0; i < 20; i++) {
            await api.post(`/api/v1/projects/${project}/probes`, {
              url: `${fast.origin}/ok?restart=${i}`,
            });
          }
          // Far ahead of real time, so no other step's probe is due here.
          const t0 = Math.ceil(Date.now() / INTERVAL) * INTERVAL + 1000 * INTERVAL;
          // The runner before the outage scheduled them (due at t0) and never ran them.
          await syncSchedules(db, { now: t0, intervalMs: INTERVAL });
          // Five minutes later a runner starts: every probe is overdue.
          const fake = FakeTimers.createClock(t0 + 5 * INTERVAL);
          const clock: Clock = {
            now: () => fake.now,
            setTimeout: (fn, ms) => fake.setTimeout(fn, ms),
            clearTimeout: (id) => fake.clearTimeout(id as FakeTimers.TimerId),
          };
          const restartedAt = fake.now;
          const runner = runnerWith({ clock, intervalMs: INTERVAL, lookaheadMs: 0 });
          const claimedFirst = await runner.poll();
          await runner.idle();
          assert.ok(claimedFirst <= 2, `${claimedFirst} of 20 overdue probes started at once`);
          let claimed = claimedFirst;
          for (let s = 1; s <= SPREAD / 1000; s++) {
            fake.tick(1_000);
            claimed += await runner.poll();
            await runner.idle();
          }
          assert.ok(claimed >= 20, "all ran within the spread (some again, on their grid)");

          const probes = await probesOf(project);
          const rows = await db.selectFrom("probe_results")
            .select(["probe_key", (eb) => eb.fn.min("started_at").as("started_at")])
            .where("probe_key", "in", probes.map((p) => p.key))
            .where("due_at", "=", new Date(t0)).groupBy("probe_key").execute();
          assert.equal(rows.length, 20, "each overdue run made once");
          const starts = new Set<number>();
          for (const row of rows) {
            const started = new Date(row.started_at).getTime() - restartedAt;
            const at = restartDelay(row.probe_key, INTERVAL, SPREAD);
            // Polled once a second: each starts in the second its point of the spread falls in.
            assert.ok(started >= at && started < at + 1_000, `${started} for ${at}`);
            starts.add(started);
          }
          assert.ok(starts.size >= 12, `only ${starts.size} distinct start seconds`);
          await api.delete(`/api/v1/projects/${project}`);
        },
      );
    } finally {
      await slow.close();
      await fast.close();
      await app.close();
    }
  });
}
