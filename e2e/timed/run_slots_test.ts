/**
 * Run slots shared fairly, so one slow host cannot starve the rest: slow-drip targets hold at most
 * their host's share of the slots while fast probes beside them stay on time, and a run that waited
 * for its host's slot keeps its lease. Probes are made through the API; runs go to loopback targets
 * that answer over real seconds, on the real clock; due and start times are read back. In the
 * end-to-end tier for those seconds; the restart spread, on a fake clock, is in
 * `server/runner/run_slots_test.ts`.
 */
import assert from "node:assert/strict";
import { createLogger } from "../../server/base/log.ts";
import { backends, startTestApp, TestClient, uniqueName } from "../../server/testing/app.ts";
import { createNetworkPolicy, parseNetworks } from "../../server/base/outbound/network_policy.ts";
import { createRunner, type RunnerOptions } from "../../server/runner/runner.ts";
import { syncSchedules } from "../../server/runner/store.ts";
import { startTarget } from "../../server/testing/target_server.ts";

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
    } finally {
      await slow.close();
      await fast.close();
      await app.close();
    }
  });
}
