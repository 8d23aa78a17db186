/**
 * Remote runners as processes: `deno task runner:remote` against `deno task start` on
 * PostgreSQL. Two runners sharing a location's work (each due run made and recorded once, the
 * target hit once per recorded run, the User-Agent naming the location); a runner killed with
 * SIGKILL mid-batch (its runs claimed again after their lease, none recorded twice); and the same
 * results posted twice. The link cut and restored: `remote_runner_cut_test.ts`.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { restCall } from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";
import {
  assertOnce,
  hitsOf,
  ignore,
  KEY,
  place,
  recorded,
  remote,
  REMOTE_ENTRY,
  resultsPerPath,
  until,
  withService,
} from "./testdata/remote_runners.ts";

Deno.test({
  name: "remote runners: sharing, SIGKILL and duplicate posts (PostgreSQL)",
  ignore,
  fn: (t) =>
    withService(async ({ service, db, target }) => {
      await t.step("--help explains the settings", async () => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["run", "--allow-all", REMOTE_ENTRY, "--help"],
          stdout: "piped",
        }).output();
        assert.equal(out.code, 0);
        const text = new TextDecoder().decode(out.stdout);
        for (const name of ["SERVICE_URL", "LOCATION_TOKEN", "PROBE_ALLOW_NETWORKS"]) {
          assert.ok(text.includes(name), name);
        }
      });

      await t.step("two runners share the work: each run made and recorded once", async () => {
        const { location, token } = await place(service, target, 20);
        const a = await remote(service.url, token, "r-a");
        const b = await remote(service.url, token, "r-b");
        await until("two runs of every probe", async () => {
          const per = resultsPerPath(await recorded(db, location));
          return per.size === 20 && [...per.values()].every((n) => n >= 2);
        });
        await Promise.all([a.stop(15_000), b.stop(15_000)]);
        const rows = await recorded(db, location);
        assertOnce(rows);
        assert.deepEqual(hitsOf(target, location), resultsPerPath(rows), "one hit per result");
        const runners = new Set(rows.map((r) => r.runner.split("#")[0]));
        assert.deepEqual([...runners].sort(), ["r-a", "r-b"], "both took part");
        const agents = new Set(
          target.hits.filter((h) => h.path.startsWith(`/${location}/`))
            .map((h) => h.headers["user-agent"]),
        );
        assert.equal(agents.size, 1);
        assert.match([...agents][0], new RegExp(`^probe-service/\\S+ \\(location=${location}\\)$`));
        const read = await restCall(service, KEY, "GET", `/locations/${location}`);
        assert.ok(read.body.data.last_seen_at !== null);
        assert.ok(read.body.data.checks_per_minute > 0);
      });

      await t.step("a runner killed mid-batch: its runs are made again, none twice", async () => {
        const slow = await startTarget({ delayMs: 4000 });
        try {
          // Runs of 4 s with a timeout of 8 s: leased 26 s.
          const { location, token } = await place(service, slow, 10, 8000);
          const a = await remote(service.url, token, "k-a");
          await until(
            "the doomed runner's runs under way",
            () => Promise.resolve(hitsOf(slow, location).size === 10),
            30_000,
          );
          const killedAt = Date.now();
          a.kill("SIGKILL");
          await a.status;
          const b = await remote(service.url, token, "k-b");
          await until(
            "a result of every probe",
            async () => resultsPerPath(await recorded(db, location)).size === 10,
          );
          await b.stop(15_000);
          const rows = await recorded(db, location);
          assertOnce(rows);
          assert.ok(
            rows.every((r) => r.runner.startsWith("k-b#")),
            "the dead runner posted nothing",
          );
          // The runs the dead runner had claimed were made again by the other, after the lease.
          const first = Math.min(...rows.map((r) => r.due));
          const { rows: claims } = await sql<{ runner: string }>`
            select runner from location_claims where location = ${location} order by issued_at`
            .execute(db);
          assert.equal(claims[0].runner, "k-a");
          assert.ok(rows.some((r) => r.due === first && r.started >= killedAt));
        } finally {
          await slow.close();
        }
      });

      await t.step("results posted twice are recorded once", async () => {
        const { location, token } = await place(service, target, 1);
        const call = (path: string, body: unknown) =>
          fetch(`${service.url}/api/v1${path}`, {
            method: "POST",
            headers: { "x-service-api-key": token, "content-type": "application/json" },
            body: JSON.stringify(body),
          }).then((r) => r.json());
        const who = { runner: "dup", version: "1" };
        let runs: { run_id: string }[] = [];
        await until("a claimable run", async () => {
          runs = (await call("/runner/claim", { ...who, wait_seconds: 1 })).data.runs;
          return runs.length > 0;
        });
        const results = runs.map((r) => ({
          run_id: r.run_id,
          started_at: new Date().toISOString(),
          duration_ms: 3,
          outcome: "up",
          http_status: 200,
          error: null,
          address: "127.0.0.1",
          failed_checks: null,
        }));
        const first = await call("/runner/results", { ...who, results });
        const second = await call("/runner/results", { ...who, results });
        assert.equal(first.data.recorded, 1);
        assert.equal(second.data.duplicate, 1);
        assert.equal((await recorded(db, location)).length, 1);
      });
    }),
});
