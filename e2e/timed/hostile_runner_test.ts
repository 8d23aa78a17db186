/**
 * A target the service watches must not knock it over. The hostile JSON target (1 MB
 * of nested arrays) watched by 10 probes of 20 `expect.json` checks, run by a real runner on
 * its real timers, while `/healthz` and a keyed read go through the real HTTP server. Each
 * must answer within 1 s (a bound that catches the stall, which took seconds: the latencies
 * themselves are `deno task bench:hostile`'s), and the runs are recorded `down` with the
 * reason in `failed_checks`. In the end-to-end tier: it watches 8 s of real time on each
 * database, and a 1 s bound wants a machine not also running the fast tier's files. The same
 * target against `deno task start` as a subprocess is `hostile_target_test.ts`.
 */
import assert from "node:assert/strict";
import { createLogger } from "../../server/base/log.ts";
import { backends, LOOPBACK_ONLY, TEST_API_KEY } from "../../server/testing/app.ts";
import { probesWithManyChecks, startHostileTarget } from "../../server/testing/hostile_target.ts";
import { startLiveServer } from "../../server/testing/live.ts";
import { MAX_JSON_DEPTH } from "../../server/runner/assertions.ts";
import { createRunner } from "../../server/runner/runner.ts";
import { createWorkerExecutor } from "../../server/runner/worker_executor.ts";

const BOUND_MS = 1000;
const WATCH_MS = 8000;

for (const backend of backends()) {
  Deno.test(
    `/healthz and a keyed read answer within 1 s while probes judge a hostile JSON target [${backend}]`,
    async () => {
      const live = await startLiveServer(backend);
      const target = await startHostileTarget();
      // Probes run in a worker, as runnerFromConfig runs them in the server.
      const worker = createWorkerExecutor({ allowNetworks: ["127.0.0.0/8"], timeoutMs: 5000 });
      const runner = createRunner({
        db: live.app.database.db,
        log: createLogger("silent"),
        // Every 2 s, five times the runs PROBE_INTERVAL_SECONDS=10 makes.
        intervalMs: 2000,
        timeoutMs: 5000,
        concurrency: 20,
        retentionDays: 7,
        policy: LOOPBACK_ONLY,
        execute: worker.execute,
      });
      const call = async (path: string, init: RequestInit = {}) => {
        const response = await fetch(`${live.url}${path}`, {
          ...init,
          headers: { "x-service-api-key": TEST_API_KEY, "content-type": "application/json" },
        });
        return { status: response.status, body: await response.json() };
      };
      try {
        assert.equal(
          (await call("/api/v1/projects", {
            method: "POST",
            body: JSON.stringify({ project: "hostile" }),
          })).status,
          201,
        );
        for (const probe of probesWithManyChecks(target.origin, 10)) {
          const created = await call("/api/v1/projects/hostile/probes", {
            method: "POST",
            body: JSON.stringify(probe),
          });
          assert.equal(created.status, 201, JSON.stringify(created.body));
        }
        runner.start();
        const slowest = { healthz: 0, keyed: 0 };
        // At least WATCH_MS, and until 20 runs are recorded (the worker may be slow to start on
        // a loaded machine); a minute at most.
        const began = performance.now();
        const watching = () =>
          performance.now() - began < WATCH_MS ||
          (runner.counters().recorded < 20 && performance.now() - began < 60_000);
        while (watching()) {
          for (const [kind, path] of [["healthz", "/healthz"], ["keyed", "/api/v1/projects"]]) {
            const started = performance.now();
            const { status } = await call(path);
            const ms = performance.now() - started;
            assert.equal(status, 200, path);
            slowest[kind as keyof typeof slowest] = Math.max(slowest[kind as "keyed"], ms);
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.ok(
          slowest.healthz < BOUND_MS && slowest.keyed < BOUND_MS,
          `slowest answers: ${JSON.stringify(slowest)} ms`,
        );
        assert.ok(runner.counters().recorded >= 20, JSON.stringify(runner.counters()));

        // The runs are down, each json check saying why.
        const list = await call("/api/v1/projects/hostile/probes");
        const probeId = list.body.data[0].probe_id;
        const results = await call(`/api/v1/projects/hostile/probes/${probeId}/results`);
        const run = results.body.data[0];
        assert.equal(run.outcome, "down");
        assert.equal(run.http_status, 200);
        assert.equal(run.failed_checks.length, 20);
        assert.deepEqual(run.failed_checks[0], {
          check: "json.0",
          expected: "(root) eq 0",
          seen: `JSON nested deeper than ${MAX_JSON_DEPTH} levels: not parsed`,
        });
      } finally {
        await runner.stop();
        worker.close();
        await live.close();
        await target.close();
      }
    },
  );
}
