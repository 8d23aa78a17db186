/**
 * Database outages: with PostgreSQL stopped, every request answers 503 `service_unavailable`
 * at once and `/readyz` says 503; once it is back, requests succeed again without a restart.
 * The PostgreSQL here is the test's own (initdb + pg_ctl on a spare port), never the shared one.
 *
 * The 2 s and 5 s bounds below are the contract of the issue, not speed targets: the answers
 * are expected in milliseconds, and the bounds only catch a request that waits or hangs.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { type App, createApp } from "../../server/app.ts";
import { openDatabase } from "../../server/storage/database.ts";
import { toApiError } from "../../server/procedures/errors.ts";
import { createLogger } from "../../server/base/log.ts";
import { findPgBin, startOwnCluster, timed } from "../../server/testing/cluster.ts";
import { openHungDatabase } from "../../server/testing/hung_database.ts";
import { TEST_API_KEY, TestClient } from "../../server/testing/app.ts";

const FAIL_FAST_MS = 2000;
const HEAL_MS = 5000;

Deno.test({
  name: "a PostgreSQL outage answers 503 fast and heals without a restart",
  ignore: findPgBin() === null,
  fn: async (t) => {
    const cluster = await startOwnCluster();
    const lines: string[] = [];
    let app: App | undefined;
    try {
      app = await createApp({
        database: {
          kind: "postgres",
          url: cluster.url,
          connectTimeoutMs: 1500,
          statementTimeoutMs: 1500,
        },
        apiKeys: [TEST_API_KEY],
        log: createLogger("info", (line) => lines.push(line)),
      });
      const api = new TestClient(app.handler);
      assert.equal((await api.post("/api/v1/projects", { project: "kept" })).status, 201);
      const input = encodeURIComponent(JSON.stringify({ project: "kept" }));
      const reads = () => [
        api.get("/api/v1/projects/kept"),
        api.get("/api/v1/probes?project=kept"),
        api.get(`/trpc/projects.get?input=${input}`),
      ];
      const writes = () => [
        api.post("/api/v1/projects/kept/probes", { url: "https://a.example.com/" }),
        api.patch("/api/v1/settings/iam-alive", { enabled: true }),
      ];

      await t.step("while it is stopped every request answers 503 within 2 s", async () => {
        await cluster.stop();
        lines.length = 0;
        // Waves of concurrent requests, more than the pool has connections, so that a request
        // stuck behind another, or behind the driver's reconnect back-off, would show.
        const answers = [];
        for (let wave = 0; wave < 5; wave++) {
          const { value, ms } = await timed(() =>
            Promise.all([
              ...Array.from({ length: 4 }, () => [...reads(), ...writes()]).flat(),
              api.delete("/api/v1/projects/kept"),
            ])
          );
          assert.ok(ms < FAIL_FAST_MS, `wave ${wave} answered in ${Math.round(ms)} ms`);
          answers.push(...value);
        }
        for (const res of answers) {
          assert.equal(res.status, 503, res.text);
          const error = res.body.error.data?.error ?? res.body.error;
          assert.deepEqual(error, {
            code: "service_unavailable",
            message: "The database is not available",
          });
          assert.equal(res.headers.get("cache-control"), "no-store");
        }
        const ready = await timed(() => api.get("/readyz", { key: null }));
        assert.ok(ready.ms < FAIL_FAST_MS);
        assert.equal(ready.value.status, 503);
        assert.deepEqual(ready.value.body, { status: "unavailable" });
        // Health says the process lives; readiness says it cannot serve.
        assert.equal((await api.get("/healthz", { key: null })).status, 200);

        const logged = lines.map((l) => JSON.parse(l));
        assert.ok(logged.some((l) => l.msg === "database unavailable" && l.level === "warn"));
        assert.ok(!logged.some((l) => l.level === "error"), "an outage is no internal error");
        assert.ok(!lines.join("\n").includes("stack"));
      });

      await t.step("once it is back, requests succeed within 5 s", async () => {
        await cluster.start();
        const started = performance.now();
        let status = 0;
        while (performance.now() - started < HEAL_MS) {
          status = (await api.get("/api/v1/projects/kept")).status;
          if (status === 200) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.equal(status, 200, "healed within 5 s");
        assert.equal((await api.get("/readyz", { key: null })).status, 200);
        for (const res of await Promise.all([...reads(), ...writes()])) {
          assert.ok(res.status < 300, `${res.status} ${res.text}`);
        }
      });
    } finally {
      await app?.close();
      await cluster.destroy();
    }
  },
});

Deno.test("a server that accepts but never answers is given up on within 2 s", async () => {
  // A listener that takes connections and says nothing, as a hung or half-dead server would.
  const hung = await openHungDatabase(1500);
  const database = hung.database;
  try {
    // Three times the pool: the queries after the first ten wait for a connection, and must
    // not wait for one connect timeout after another.
    const { value: errors, ms } = await timed(() =>
      Promise.all(
        Array.from(
          { length: 30 },
          () => sql`select 1`.execute(database.db).then(() => null, (e: unknown) => e),
        ),
      )
    );
    assert.ok(ms < FAIL_FAST_MS, `gave up after ${Math.round(ms)} ms`);
    for (const error of errors) {
      assert.ok(error !== null, "the query fails");
      assert.equal(toApiError(error).status, 503);
    }
  } finally {
    await hung.close();
  }
});

Deno.test({
  name: "a statement over the statement timeout is cancelled and answers 503",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const database = await openDatabase({
      kind: "postgres",
      url: Deno.env.get("TEST_DATABASE_URL")!,
      poolSize: 1,
      statementTimeoutMs: 200,
    });
    try {
      const error = await sql`select pg_sleep(5)`.execute(database.db).then(
        () => null,
        (e: unknown) => e,
      );
      assert.equal((error as { code?: string }).code, "57014");
      const { status, body } = toApiError(error);
      assert.equal(status, 503);
      assert.equal(body.error.code, "service_unavailable");
      // The connection stays usable for the next query.
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      assert.equal(rows[0].one, 1);
    } finally {
      await database.close();
    }
  },
});
