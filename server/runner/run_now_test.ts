/**
 * Run-now (`POST …/probes/{probe_id}/run`) through the HTTP handler, against loopback targets: its
 * claim is let go when recording fails (so a failed run-now never holds a probe), and every request
 * it sends past the first (redirect hops) is charged to the caller's key.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
import { systemClock } from "../base/clock.ts";
import { executeProbe } from "./execute.ts";
import {
  backends,
  freshDatabase,
  LOOPBACK_ONLY,
  startTestApp,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../testing/app.ts";
import { startTarget } from "../testing/target_server.ts";

for (const backend of backends()) {
  Deno.test(`run-now [${backend}]`, async (t) => {
    const target = await startTarget();
    try {
      await t.step(
        "a run whose recording fails lets its claim go: the next run-now runs",
        async () => {
          const app = await startTestApp(backend);
          const api = new TestClient(app.handler);
          const db = app.database.db;
          try {
            const project = uniqueName();
            await api.post("/api/v1/projects", { project });
            const created = await api.post(`/api/v1/projects/${project}/probes`, {
              url: `${target.origin}/ok?record`,
            });
            const path = `/api/v1/projects/${project}/probes/${created.body.data.probe_id}`;
            // The database fails the recording as it does past its statement timeout.
            await sql`
            create function refuse_results() returns trigger language plpgsql as $$
            begin raise exception 'canceled' using errcode = '57014'; end $$`.execute(db);
            await sql`
            create trigger refuse_results before insert on probe_results
            for each statement execute function refuse_results()`.execute(db);
            const failed = await api.post(`${path}/run`);
            assert.equal(failed.status, 503, failed.text);
            assert.equal(failed.body.error.code, "service_unavailable");
            await sql`drop trigger refuse_results on probe_results`.execute(db);

            // On main the claim stayed for 2 minutes: 409 here.
            const again = await api.post(`${path}/run`);
            assert.equal(again.status, 200, again.text);
            assert.equal(again.body.data.outcome, "up");
            const results = await api.get(`${path}/results`);
            assert.equal(results.body.meta.count, 1, "only the recorded run is there");
            // And the claim of a run that did record is let go as before.
            assert.equal((await api.post(`${path}/run`)).status, 200);
          } finally {
            await app.close();
          }
        },
      );

      await t.step("each redirect hop of a run-now takes the key's rate-limit budget", async () => {
        let now = 0;
        const app = await createApp({
          database: await freshDatabase(backend),
          apiKeys: [TEST_API_KEY],
          log: createLogger("silent"),
          runProbe: (probe, hooks) =>
            executeProbe(probe, { ...hooks, policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
          // 5 requests a second, 10 at most in a burst; time moves only when the test says.
          config: { rateLimitPerSecond: 5 },
          clock: { ...systemClock, now: () => now },
        });
        const api = new TestClient(app.handler);
        try {
          const project = uniqueName();
          await api.post("/api/v1/projects", { project });
          const ids: string[] = [];
          for (const path of ["/redirect/5", "/ok?plain"]) {
            const res = await api.post(`/api/v1/projects/${project}/probes`, {
              url: `${target.origin}${path}`,
            });
            ids.push(res.body.data.probe_id);
          }
          const sent = () => target.hits.length;
          /** Run-now on a probe until the key is refused; how many ran and what they sent. */
          const runUntilRefused = async (id: string) => {
            now += 10_000; // a full bucket: 10 tokens
            const before = sent();
            let runs = 0;
            for (let i = 0; i < 20; i++) {
              const res = await api.post(`/api/v1/projects/${project}/probes/${id}/run`);
              if (res.status === 429) {
                assert.ok(Number(res.headers.get("retry-after")) >= 1);
                break;
              }
              assert.equal(res.status, 200, res.text);
              runs++;
            }
            return { runs, requests: sent() - before };
          };

          // Six requests a run (5 hops): the key's 10 tokens pay for 2 runs, not 10 (60 requests
          // on main, for a key allowed 10).
          const chained = await runUntilRefused(ids[0]);
          assert.equal(chained.requests, 6 * chained.runs);
          assert.equal(chained.runs, 2, `${chained.runs} runs, ${chained.requests} requests`);

          // A probe without redirects costs its one call, no more.
          const plain = await runUntilRefused(ids[1]);
          assert.deepEqual(plain, { runs: 10, requests: 10 });
        } finally {
          await app.close();
        }
      });
    } finally {
      await target.close();
    }
  });
}
