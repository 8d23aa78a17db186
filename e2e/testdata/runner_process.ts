/**
 * A runner process for the multi-runner tests: `deno task runner` with test-sized timings
 * (TEST_INTERVAL_MS, TEST_LEASE_MS) and a known RUNNER_ID.
 */
import { runnerProcess } from "../../server/operations/runner_process.ts";

const env = Deno.env.toObject();
Deno.exit(
  await runnerProcess(env, {
    id: env.RUNNER_ID,
    intervalMs: Number(env.TEST_INTERVAL_MS),
    leaseMs: Number(env.TEST_LEASE_MS),
    pollMs: 50,
    syncEveryMs: 200,
    flushEveryMs: 50,
    lookaheadMs: 500,
  }),
);
