/**
 * `heartbeats create|list|get|update|delete|pings`: the CLI in-process against a real app, on
 * PGlite and, with TEST_DATABASE_URL, on PostgreSQL. A job's pings are plain HTTP requests.
 */
import assert from "node:assert/strict";
import { backends, BASE, TEST_READ_KEY, uniqueName } from "../server/testing/app.ts";
import { heartbeatApp } from "../server/testing/heartbeats.ts";
import { EXIT } from "./exit_codes.ts";
import { seconds } from "./commands/heartbeats.ts";
import { expectExit, runCliOn } from "./testing.ts";

Deno.test("--period and the other seconds take plain seconds or units", () => {
  assert.equal(seconds("90"), 90);
  assert.equal(seconds("15m"), 900);
  assert.equal(seconds("1d12h"), 129_600);
  assert.throws(() => seconds("an hour"), /Not a number of seconds/);
  assert.throws(() => seconds("1h 5m"), /Not a number of seconds/);
});

for (const backend of backends()) {
  Deno.test(`cli: heartbeats: create prints the ping URL; list, get, update, pings and delete [${backend}]`, async () => {
    const { app } = await heartbeatApp(backend);
    try {
      const cli = (...args: string[]) => runCliOn(app, args);
      const project = uniqueName();
      expectExit(await cli("projects", "create", project), EXIT.ok);
      const created = expectExit(
        await cli(
          "heartbeats",
          "create",
          project,
          "backup",
          "--schedule",
          "30 2 * * *",
          "--timezone",
          "Europe/Berlin",
          "--grace",
          "1h",
          "--max-duration",
          "45m",
        ),
        EXIT.ok,
      ).stdout;
      const url = created.match(/Ping URL \(keep it secret\): (\S+)/)?.[1];
      assert.ok(url?.startsWith(`${BASE}/ping/`), created);
      assert.ok(created.includes(`curl -fsS -m 10 --retry 3 -o /dev/null ${url}`), created);
      expectExit(await cli("heartbeats", "create", project, "queue", "--period", "5m"), EXIT.ok);

      const listed = expectExit(await cli("heartbeats", "list", project), EXIT.ok).stdout;
      const [head, ...rows] = listed.trimEnd().split("\n");
      assert.match(head, /^NAME\s+STATE\s+EXPECTED\s+GRACE_S\s+LAST_PING\s+NEXT_DEADLINE\s+PINGS$/);
      assert.match(rows[0], /^backup\s+new\s+30 2 \* \* \* Europe\/Berlin\s+3600\s+-\s+\S+\s+0$/);
      assert.match(rows[1], /^queue\s+new\s+every 300 s\s+60\s+/);

      const shown = expectExit(await cli("--json", "heartbeats", "get", project, "backup"), EXIT.ok)
        .json().data;
      assert.equal(shown.max_duration_seconds, 2700);
      assert.equal(shown.ping_url, url);

      // A job pings with its output; the CLI shows the ping, its control characters defused.
      const ping = await app.handler(
        new Request(`${url}/fail`, { method: "POST", body: "\u001b[31mdisk full\u001b[0m\nmore" }),
      );
      assert.equal(ping.status, 200, await ping.text());
      const pings = expectExit(await cli("heartbeats", "pings", project, "backup"), EXIT.ok).stdout;
      assert.match(
        pings,
        /^N\s+AT\s+KIND\s+EXIT\s+METHOD\s+FROM\s+BODY\n1\s+\S+\s+fail\s+-\s+POST/,
      );
      assert.ok(pings.includes("?[31mdisk full?[0m…"), pings);
      assert.ok(!pings.includes("\u001b"), "no terminal escape reaches the terminal");

      const updated = expectExit(
        await cli(
          "--json",
          "heartbeats",
          "update",
          project,
          "backup",
          "--period",
          "1d",
          "--no-max-duration",
        ),
        EXIT.ok,
      ).json().data;
      assert.equal(updated.period_seconds, 86_400);
      assert.equal(updated.schedule, null);
      assert.equal(updated.max_duration_seconds, null);

      // A read-only key reads the heartbeat without its token.
      const masked = expectExit(
        await runCliOn(app, ["heartbeats", "get", project, "backup"], {
          env: { SERVICE_API_KEY: TEST_READ_KEY },
        }),
        EXIT.ok,
      ).stdout;
      assert.match(masked, /ping_url\s+\S+\/ping\/\*\*\*\*$/m);

      // The API's refusals, in its words, with the CLI's exit statuses.
      const both = await cli("heartbeats", "create", project, "x", "--schedule", "61 * * * *");
      expectExit(both, EXIT.invalid);
      assert.match(both.stderr, /schedule: is not a cron expression/);
      expectExit(
        await cli("heartbeats", "create", project, "queue", "--period", "60"),
        EXIT.conflict,
      );
      const usage = await cli(
        "heartbeats",
        "create",
        project,
        "y",
        "--period",
        "1h",
        "--schedule",
        "* * * * *",
      );
      expectExit(usage, EXIT.usage);

      expectExit(await cli("heartbeats", "delete", project, "backup"), EXIT.ok);
      expectExit(await cli("heartbeats", "get", project, "backup"), EXIT.notFound);
      const gone = await app.handler(new Request(url!));
      assert.equal(gone.status, 404);
      await gone.body?.cancel();
    } finally {
      await app.close();
    }
  });
}
