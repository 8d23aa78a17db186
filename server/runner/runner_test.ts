import assert from "node:assert/strict";
import { fakeClock } from "../testing/runner_clock.ts";
import { createLogger } from "../base/log.ts";
import { backends, startTestApp, TestClient, uniqueName } from "../testing/app.ts";
import {
  createNetworkPolicy,
  type NetworkPolicy,
  parseNetworks,
} from "../base/outbound/network_policy.ts";
import { createRunner, type RunnerOptions } from "./runner.ts";
import { offsetOf } from "../domain/schedule.ts";
import { startTarget } from "../testing/target_server.ts";

const INTERVAL = 60_000;
const loopback = createNetworkPolicy(parseNetworks("127.0.0.0/8"));

for (const backend of backends()) {
  Deno.test(`probe runner [${backend}]`, async (t) => {
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    const db = app.database.db;
    const target = await startTarget();
    const runnerWith = (over: Partial<RunnerOptions> & { policy?: NetworkPolicy } = {}) =>
      createRunner({
        db,
        log: createLogger("silent"),
        intervalMs: INTERVAL,
        timeoutMs: 2_000,
        concurrency: 20,
        retentionDays: 7,
        policy: loopback,
        lookaheadMs: 0,
        retryPauseMs: 1,
        ...over,
      });
    const keyOf = async (project: string, probeId: string) =>
      String(
        (await db.selectFrom("probes").select("key").where("project", "=", project)
          .where("probe_id", "=", probeId).executeTakeFirstOrThrow()).key,
      );
    const dueTimes = async (key: string) =>
      (await db.selectFrom("probe_results").select("due_at").where("probe_key", "=", key)
        .orderBy("due_at").execute()).map((r) => new Date(r.due_at).getTime());

    try {
      await t.step(
        "with fake time: runs on each probe's grid, skips disabled projects, keeps history through rewrites",
        async () => {
          // Runners share one database in this test; each step uses its own projects, and the
          // fake clock runs far in the future so earlier steps' probes are never due again here.
          const start = Math.ceil(Date.now() / INTERVAL) * INTERVAL;
          const { fake, clock } = fakeClock(start);
          const runner = runnerWith({ clock });
          const project = uniqueName();
          await api.post("/api/v1/projects", { project });
          const ids: string[] = [];
          for (const path of ["/ok", "/slow?ms=30", "/status/500"]) {
            const res = await api.post(`/api/v1/projects/${project}/probes`, {
              url: `${target.origin}${path}`,
              latency: 5_000,
            });
            ids.push(res.body.data.probe_id);
          }
          const keys = await Promise.all(ids.map((id) => keyOf(project, id)));

          assert.ok(await runner.sync() >= 3);
          // New probes are due at once: the first results come without waiting an interval.
          assert.equal(await runner.poll(), 3);
          await runner.idle();
          assert.equal(await runner.poll(), 0, "nothing is due twice");
          const first = await api.get(`/api/v1/projects/${project}/probes/${ids[0]}/results`);
          assert.equal(first.body.meta.count, 1);
          assert.equal(first.body.data[0].outcome, "up");
          assert.equal(first.body.data[0].started_at, new Date(start).toISOString());
          const failing = await api.get(`/api/v1/projects/${project}/probes/${ids[2]}/results`);
          assert.equal(failing.body.data[0].outcome, "down");
          assert.equal(failing.body.data[0].http_status, 500);

          // One interval on: each probe ran once more, at its own offset on the grid.
          fake.tick(INTERVAL);
          assert.equal(await runner.poll(), 3);
          await runner.idle();
          for (const key of keys) {
            const [, second] = await dueTimes(key);
            assert.equal((second - offsetOf(key, INTERVAL)) % INTERVAL, 0, "on the probe's grid");
            assert.ok(second > start && second <= start + INTERVAL);
          }

          // A disabled project's probes are claimed and passed over: no run, no result.
          await api.patch(`/api/v1/projects/${project}`, { status: "disabled" });
          fake.tick(INTERVAL);
          const before = target.hits.length;
          assert.equal(await runner.poll(), 3);
          await runner.idle();
          assert.equal(target.hits.length, before, "the target saw nothing");
          assert.equal(runner.counters().skipped, 3);
          for (const key of keys) assert.equal((await dueTimes(key)).length, 2);

          // Enabled again, they resume on their grid.
          await api.patch(`/api/v1/projects/${project}`, { status: "enabled" });
          fake.tick(INTERVAL);
          assert.equal(await runner.poll(), 3);
          await runner.idle();
          for (const key of keys) {
            const due = await dueTimes(key);
            assert.equal(due.length, 3);
            assert.equal(due[2] - due[1], 2 * INTERVAL, "the disabled slot was skipped");
          }

          // A PATCH that changes the URL changes the probe_id; the history follows the probe.
          const patched = await api.patch(`/api/v1/projects/${project}/probes/${ids[0]}`, {
            url: `${target.origin}/ok?v=2`,
          });
          const newId = patched.body.data.probe_id;
          assert.notEqual(newId, ids[0]);
          // So does a rewrite by POST to the same URL.
          await api.post(`/api/v1/projects/${project}/probes`, {
            url: `${target.origin}/ok?v=2`,
            latency: 4_000,
          });
          fake.tick(INTERVAL);
          assert.equal(await runner.poll(), 3);
          await runner.idle();
          const history = await api.get(`/api/v1/projects/${project}/probes/${newId}/results`);
          assert.equal(history.body.meta.count, 4);
          const stats = await api.get(`/api/v1/projects/${project}/probes/${newId}/stats`);
          assert.equal(stats.body.data.last_outcome, "up");

          // Deleting the project stops its probes at once: their schedule rows are gone with it.
          await api.delete(`/api/v1/projects/${project}`);
          const left = await db.selectFrom("probe_schedule").select("probe_key")
            .where("probe_key", "in", keys).execute();
          assert.deepEqual(left, []);
          fake.tick(INTERVAL);
          assert.equal(await runner.poll(), 0);
        },
      );

      await t.step("a claim made ahead of time starts at the due time, not before", async () => {
        const start = Math.ceil(Date.now() / INTERVAL) * INTERVAL + 100 * INTERVAL;
        const { fake, clock } = fakeClock(start);
        const runner = runnerWith({ clock, lookaheadMs: 5_000 });
        const project = uniqueName();
        await api.post("/api/v1/projects", { project });
        const res = await api.post(`/api/v1/projects/${project}/probes`, {
          url: `${target.origin}/ok?ahead`,
        });
        const key = await keyOf(project, res.body.data.probe_id);
        await runner.sync();
        await runner.poll();
        await runner.idle();
        const { next_due_at } = await db.selectFrom("probe_schedule").select("next_due_at")
          .where("probe_key", "=", key).executeTakeFirstOrThrow();
        const grid = new Date(next_due_at).getTime();
        assert.equal((grid - offsetOf(key, INTERVAL)) % INTERVAL, 0);
        // Move to 3 s before the next due time: the claim is made, the run waits for its time.
        fake.setSystemTime(grid - 3_000);
        const hits = target.counts.get("/ok") ?? 0;
        assert.equal(await runner.poll(), 1);
        await runner.idle();
        assert.equal(target.counts.get("/ok") ?? 0, hits, "not run early");
        await fake.tickAsync(3_000);
        await runner.idle();
        assert.equal(target.counts.get("/ok") ?? 0, hits + 1);
        const rows = await db.selectFrom("probe_results").select(["due_at", "started_at"])
          .where("probe_key", "=", key).orderBy("due_at").execute();
        assert.equal(new Date(rows[1].started_at).getTime(), grid, "started exactly on time");
      });

      await t.step("no more than PROBE_CONCURRENCY runs are in flight at once", async () => {
        let current = 0;
        let peak = 0;
        const runner = runnerWith({
          concurrency: 2,
          // A day between runs: no probe's next grid point can fall due between the two polls
          // (with 60 s, a slow machine saw one claimed again, one time in some dozens).
          intervalMs: 86_400_000,
          execute: async () => {
            current++;
            peak = Math.max(peak, current);
            await new Promise((r) => setTimeout(r, 20));
            current--;
            return {
              startedAt: new Date(),
              durationMs: 20,
              outcome: "up",
              httpStatus: 200,
              error: null,
              address: null,
            };
          },
        });
        const project = uniqueName();
        await api.post("/api/v1/projects", { project });
        for (let i = 0; i < 6; i++) {
          await api.post(`/api/v1/projects/${project}/probes`, { url: `${target.origin}/c/${i}` });
        }
        await runner.sync();
        // Claims run ahead of the slots (twice the concurrency), runs do not.
        assert.equal(await runner.poll(), 4);
        await runner.idle();
        assert.equal(await runner.poll(), 2);
        await runner.idle();
        assert.equal(peak, 2);
        assert.equal(runner.counters().recorded, 6);
        await api.delete(`/api/v1/projects/${project}`);
      });

      await t.step(
        "with loopback not allowed a probe is recorded blocked and the target sees nothing",
        async () => {
          const runner = runnerWith({ policy: createNetworkPolicy() });
          const project = uniqueName();
          await api.post("/api/v1/projects", { project });
          const res = await api.post(`/api/v1/projects/${project}/probes`, {
            url: `${target.origin}/blocked-here`,
          });
          await runner.sync();
          while (await runner.poll() > 0) await runner.idle();
          await runner.idle();
          assert.equal(target.counts.get("/blocked-here"), undefined);
          const results = await api.get(
            `/api/v1/projects/${project}/probes/${res.body.data.probe_id}/results`,
          );
          assert.equal(results.body.data[0].outcome, "blocked");
          assert.equal(results.body.data[0].address, "127.0.0.1");
          assert.match(results.body.data[0].error, /loopback/);
        },
      );

      await t.step(
        "a claim that took its whole limit claims again at once; one that took less waits for the poll",
        async () => {
          const start = Math.ceil(Date.now() / INTERVAL) * INTERVAL + 40 * INTERVAL;
          const { fake, clock } = fakeClock(start);
          const release = Promise.withResolvers<void>();
          const project = uniqueName();
          await api.post("/api/v1/projects", { project });
          const runner = runnerWith({
            clock,
            claimBatch: 2,
            pollMs: 30_000,
            syncEveryMs: 600_000,
            // Runs that last until the test ends: what is in flight is what was claimed.
            execute: async () => {
              await release.promise;
              return {
                startedAt: new Date(start),
                durationMs: 1,
                outcome: "up",
                httpStatus: 200,
                error: null,
                address: null,
              };
            },
          });
          /**
           * Moves the fake clock a millisecond at a time (a timer set for 0 ms while its timers
           * fire is due a millisecond later) until the runner's claims have settled.
           */
          const settle = async () => {
            for (let i = 0; i < 20; i++) {
              await fake.tickAsync(1);
              await new Promise((r) => setTimeout(r, 20));
            }
          };
          try {
            for (let i = 0; i < 5; i++) {
              await api.post(`/api/v1/projects/${project}/probes`, {
                url: `${target.origin}/ok?claim=${i}`,
              });
            }
            assert.ok(await runner.sync() >= 5);
            runner.start();
            await settle();
            // 2, 2 and 1, one claim right after the other: the first two took their limit.
            assert.equal(runner.counters().inFlight, 5);
            // Five more come due, after the partial claim: not claimed before the next poll.
            for (let i = 5; i < 10; i++) {
              await api.post(`/api/v1/projects/${project}/probes`, {
                url: `${target.origin}/ok?claim=${i}`,
              });
            }
            assert.ok(await runner.sync() >= 5);
            await settle();
            assert.equal(runner.counters().inFlight, 5, "nothing claimed before the poll");
            await fake.tickAsync(30_000);
            await settle();
            // The poll claims them (and other steps' probes that came due meanwhile).
            assert.ok(runner.counters().inFlight >= 10, `${runner.counters().inFlight} in flight`);
          } finally {
            release.resolve();
            await settle();
            await runner.stop();
            await api.delete(`/api/v1/projects/${project}`);
          }
        },
      );

      await t.step(
        "a new probe shows results and stats within one interval of being added",
        async () => {
          const lines: string[] = [];
          const runner = runnerWith({
            log: createLogger("debug", (line) => lines.push(line)),
            syncEveryMs: 50,
            pollMs: 20,
            flushEveryMs: 20,
            lookaheadMs: 1_000,
          });
          runner.start();
          try {
            const project = uniqueName();
            await api.post("/api/v1/projects", { project });
            const res = await api.post(`/api/v1/projects/${project}/probes`, {
              url: `${target.origin}/echo`,
              headers: { Authorization: "Bearer top-secret-1", Cookie: "session=top-secret-2" },
            });
            const path = `/api/v1/projects/${project}/probes/${res.body.data.probe_id}`;
            let results;
            for (let i = 0; i < 400; i++) {
              results = await api.get(`${path}/results`);
              if (results.body.meta.count > 0) break;
              await new Promise((r) => setTimeout(r, 25));
            }
            assert.equal(results!.body.meta.count, 1);
            const stats = await api.get(`${path}/stats`);
            assert.equal(stats.body.data.runs, 1);
            assert.equal(stats.body.data.uptime, 1);
            const status = await api.get(`/api/v1/projects/${project}/status`);
            assert.equal(status.body.data[0].last_outcome, "up");
            // The target got the credentials; results and logs never show them.
            assert.ok(target.hits.some((h) => h.headers.authorization === "Bearer top-secret-1"));
            for (const text of [results!.text, stats.text, status.text, lines.join("\n")]) {
              assert.ok(!text.includes("top-secret"));
            }
          } finally {
            await runner.stop();
          }
          assert.ok(lines.some((l) => l.includes("runner stopped")));
        },
      );
    } finally {
      await target.close();
      await app.close();
    }
  });
}
