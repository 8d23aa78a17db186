// The CLI's results, stats and status board as a subprocess against a live server whose runner
// ran real probes (a file of its own so that it runs beside cli_test.ts under --parallel).
import assert from "node:assert/strict";
import { backends, uniqueName } from "../server/testing/app.ts";
import { startLiveServer } from "../server/testing/live.ts";
import { insertRuns } from "../server/runner/store.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { runDueProbesOnce } from "../server/testing/runs.ts";
import { EXIT } from "../cli/exit_codes.ts";
import { cli, expect } from "./testdata/cli_run.ts";

for (const backend of backends()) {
  // A server of its own: the runner here runs every probe in its database.
  Deno.test(`deno task cli: results, stats and status board [${backend}]`, async (t) => {
    const server = await startLiveServer(backend);
    const target = await startTarget();
    const env = { PROBE_SERVICE_URL: server.url, SERVICE_API_KEY: server.apiKey };
    const run = (args: string[]) => cli(args, env);
    try {
      const project = uniqueName("cli");
      expect(await run(["projects", "create", project]), 0);
      const probeId = expect(
        await run(["--json", "probes", "create", project, `${target.origin}/ok`]),
        0,
      ).json().data.probe_id;
      const failingId = expect(
        await run(["--json", "probes", "create", project, `${target.origin}/status/503`]),
        0,
      ).json().data.probe_id;

      await t.step("before any run: no results, empty stats, a blank board", async () => {
        const empty = expect(await run(["results", "list", project, probeId]), 0);
        assert.equal(empty.stdout, "No results.\n");
        const stats = expect(await run(["results", "stats", project, probeId]), 0);
        assert.match(stats.stdout, /^window\s+24h$/m);
        assert.match(stats.stdout, /^runs\s+0$/m);
        assert.match(stats.stdout, /^uptime\s+-$/m);
        const board = expect(await run(["projects", "status", project]), 0);
        assert.match(board.stdout, new RegExp(`^Project ${project} is enabled, 2 probes\\.$`, "m"));
        assert.match(
          board.stdout,
          new RegExp(`^${probeId}\\s+GET\\s+\\S+/ok\\s+-\\s+-\\s+0\\s+-$`, "m"),
        );
      });

      await t.step("after a real run on loopback: tables and JSON", async () => {
        assert.equal((await runDueProbesOnce(server.app.database.db)).recorded, 2);

        const listed = expect(await run(["results", "list", project, probeId]), 0);
        const [head, row, ...rest] = listed.stdout.trimEnd().split("\n");
        assert.match(
          head,
          /^STARTED_AT\s+LOCATION\s+OUTCOME\s+HTTP\s+DURATION_MS\s+ADDRESS\s+ERROR$/,
        );
        assert.match(row, /^\d{4}-\d\d-\d\dT\S+Z\s+local\s+up\s+200\s+\d+\s+127\.0\.0\.1\s+-$/);
        assert.deepEqual(rest, []);
        const json = expect(await run(["--json", "results", "list", project, failingId]), 0).json();
        assert.equal(json.meta.count, 1);
        assert.equal(json.meta.next_before, null);
        assert.equal(json.data[0].outcome, "down");
        assert.equal(json.data[0].http_status, 503);

        const stats = expect(
          await run(["results", "stats", project, probeId, "--window", "1h"]),
          0,
        );
        assert.match(stats.stdout, /^window\s+1h$/m);
        assert.match(stats.stdout, /^runs\s+1$/m);
        assert.match(stats.stdout, /^up\s+1$/m);
        assert.match(stats.stdout, /^uptime\s+100\.00%$/m);
        assert.match(stats.stdout, /^p95_ms\s+\d+$/m);
        assert.match(stats.stdout, /^last_outcome\s+up$/m);
        const statsJson = expect(
          await run(["--json", "results", "stats", project, failingId, "--window", "7d"]),
          0,
        ).json();
        assert.equal(statsJson.data.window, "7d");
        assert.deepEqual([statsJson.data.runs, statsJson.data.down], [1, 1]);
        assert.equal(statsJson.data.uptime, 0);

        const board = expect(await run(["projects", "status", project]), 0);
        const lines = board.stdout.trimEnd().split("\n");
        assert.match(
          lines[1],
          /^PROBE_ID\s+METHOD\s+URL\s+LAST_OUTCOME\s+LAST_RUN_AT\s+RUNS_24H\s+UPTIME_24H$/,
        );
        assert.match(
          board.stdout,
          new RegExp(`^${probeId}\\s+GET\\s+\\S+/ok\\s+up\\s+\\S+Z\\s+1\\s+100\\.00%$`, "m"),
        );
        assert.match(
          board.stdout,
          new RegExp(`^${failingId}\\s+.*\\s+down\\s+\\S+Z\\s+1\\s+0\\.00%$`, "m"),
        );
        const boardJson = expect(await run(["--json", "projects", "status", project]), 0).json();
        assert.deepEqual(boardJson.meta, { count: 2, status: "enabled" });
      });

      await t.step("--limit and --before page through the results", async () => {
        const { key } = await server.app.database.db.selectFrom("probes").select("key")
          .where("project", "=", project).where("probe_id", "=", probeId)
          .executeTakeFirstOrThrow();
        const now = Date.now();
        await insertRuns(
          server.app.database.db,
          "cli-test",
          [2, 1].map((hours) => ({
            key: String(key),
            due: now - hours * 3_600_000,
            result: {
              startedAt: new Date(now - hours * 3_600_000),
              durationMs: 40 + hours,
              outcome: "up" as const,
              httpStatus: 200,
              error: null,
              address: "127.0.0.1",
            },
          })),
        );
        const first = expect(await run(["results", "list", project, probeId, "--limit", "2"]), 0);
        const cursor = first.stdout.match(/^Next page: --before (\S+)$/m)?.[1];
        assert.equal(cursor, new Date(now - 3_600_000).toISOString(), first.stdout);
        const second = expect(
          await run([
            "--json",
            "results",
            "list",
            project,
            probeId,
            "--limit",
            "2",
            "--before",
            cursor!,
          ]),
          0,
        ).json();
        assert.deepEqual(second.data.map((r: { duration_ms: number }) => r.duration_ms), [42]);
        assert.equal(second.meta.next_before, null);
      });

      await t.step("exit statuses: missing probe or project 4, bad values 6 or 2", async () => {
        const missing = "0000000000000000";
        expect(await run(["results", "list", project, missing]), EXIT.notFound);
        const jsonError = expect(
          await run(["--json", "results", "stats", project, missing]),
          EXIT.notFound,
        );
        assert.equal(JSON.parse(jsonError.stderr).error.code, "not_found");
        expect(await run(["projects", "status", uniqueName("missing")]), EXIT.notFound);
        const limit = expect(
          await run(["results", "list", project, probeId, "--limit", "0"]),
          EXIT.invalid,
        );
        assert.match(limit.stderr, /^ {2}limit: /m);
        expect(
          await run(["results", "list", project, probeId, "--before", "yesterday"]),
          EXIT.invalid,
        );
        expect(await run(["results", "stats", project, probeId, "--window", "2h"]), EXIT.usage);
        expect(
          await cli(["projects", "status", project], { ...env, SERVICE_API_KEY: "wrong-key-1" }),
          EXIT.unauthorized,
        );
      });
    } finally {
      await target.close();
      await server.close();
    }
  });
}
