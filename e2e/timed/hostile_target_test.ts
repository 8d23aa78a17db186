/**
 * Issue 18, as an operator meets it: `deno task start` on PostgreSQL watching the hostile JSON
 * target (1 MB of nested arrays) with 10 probes of 20 `expect.json` checks, every 10 s. The
 * server answers `/healthz` and a keyed read within 1 s all along (before the fixes they took
 * seconds, and the process exited with postgres.js's null-socket TypeError), is restarted with
 * every probe overdue, and stays up and judging after the restart too.
 */
import assert from "node:assert/strict";
import { createPostgresDatabase } from "../../server/testing/app.ts";
import { probesWithManyChecks, startHostileTarget } from "../../server/testing/hostile_target.ts";
import {
  isListeningLine,
  restCall,
  type ServerProcess,
  startServerProcess,
} from "../../server/testing/process.ts";

const KEY = "hostile-e2e-key-0123";
const BOUND_MS = 1000;
const WATCH_MS = 12_000;

/** Times `/healthz` and a keyed read, one after the other, for `ms`; returns the slowest. */
async function watch(server: ServerProcess, ms: number) {
  const slowest = { healthz: 0, keyed: 0 };
  const until = performance.now() + ms;
  while (performance.now() < until) {
    for (const [kind, path, key] of [["healthz", "/healthz"], ["keyed", "/api/v1/projects", KEY]]) {
      const started = performance.now();
      const response = await fetch(`${server.url}${path}`, {
        headers: key ? { "x-service-api-key": key } : {},
        signal: AbortSignal.timeout(30_000),
      });
      await response.body?.cancel();
      assert.equal(response.status, 200, `${path}; output:\n${server.output()}`);
      const took = performance.now() - started;
      slowest[kind as "keyed"] = Math.max(slowest[kind as "keyed"], took);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return slowest;
}

Deno.test({
  name: "the server stays up and answering while it watches a hostile JSON target, across a " +
    "restart [postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const dataDir = await Deno.makeTempDir();
    const target = await startHostileTarget();
    const start = () =>
      startServerProcess({
        env: {
          SERVICE_API_KEY: KEY,
          DATA_DIR: dataDir,
          DATABASE_URL: url,
          PROBE_INTERVAL_SECONDS: "10",
          PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
        },
        output: "capture",
        readyLine: isListeningLine,
      });
    let server = await start();
    const runs = async () => {
      const list = await restCall(server, KEY, "GET", "/projects/hostile/probes");
      const probeId = list.body.data[0].probe_id;
      return (await restCall(server, KEY, "GET", `/projects/hostile/probes/${probeId}/results`))
        .body.data;
    };
    try {
      await restCall(server, KEY, "POST", "/projects", { project: "hostile" });
      for (const probe of probesWithManyChecks(target.origin, 10)) {
        const created = await restCall(server, KEY, "POST", "/projects/hostile/probes", probe);
        assert.equal(created.status, 201);
      }
      const before = await watch(server, WATCH_MS);
      assert.ok(
        before.healthz < BOUND_MS && before.keyed < BOUND_MS,
        `slowest: ${JSON.stringify(before)}`,
      );
      const first = await runs();
      assert.ok(first.length >= 1);
      assert.equal(first[0].outcome, "down");
      assert.match(first[0].failed_checks[0].seen, /nested deeper than 64 levels/);

      // A restart with every probe overdue: it was stopped for longer than the interval.
      assert.equal((await server.stop()).code, 0, server.output());
      await new Promise((resolve) => setTimeout(resolve, 10_500));
      const hits = target.hits();
      server = await start();
      const after = await watch(server, WATCH_MS);
      assert.ok(
        after.healthz < BOUND_MS && after.keyed < BOUND_MS,
        `slowest after the restart: ${JSON.stringify(after)}`,
      );
      assert.ok(target.hits() >= hits + 10, "the overdue probes ran after the restart");
      assert.ok((await runs()).length > first.length, "and their runs were recorded");
      assert.doesNotMatch(server.output(), /Uncaught|database client fault/);
    } finally {
      const status = await server.stop();
      await target.close();
      await Deno.remove(dataDir, { recursive: true });
      await drop();
      assert.equal(status.code, 0, server.output());
    }
  },
});
