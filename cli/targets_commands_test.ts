/**
 * `targets` with the kinds beyond webhook, Slack, Discord and mail: a kind's settings with
 * `--set`, `--set-env` and `--set-file`, its secrets refused on the command line and never
 * printed, its other settings shown; `targets kinds`. In-process against a real app on PGlite
 * and, with TEST_DATABASE_URL, PostgreSQL.
 */
import assert from "node:assert/strict";
import { TARGET_KINDS } from "@probe/shared";
import { apiSuite, type TestContext, uniqueName } from "../server/testing/app.ts";
import { EXIT } from "./exit_codes.ts";
import { type CliOptions, type CliRun, expectExit, runCliOn } from "./testing.ts";

const cli = ({ app }: TestContext, args: string[], options: CliOptions = {}) =>
  runCliOn(app, args, options);
const expect = expectExit;

const ROUTING_KEY = "R0UT1NGKEYclitest00000000000wxyz";
const BOT_TOKEN = "123456789:AAcliTestTokenForTelegram_0000abcd";

/** Asserts that no run printed a secret. */
function nothingPrinted(runs: CliRun[], ...secrets: string[]) {
  for (const run of runs) {
    for (const secret of secrets) {
      assert.ok(!(run.stdout + run.stderr).includes(secret), run.stdout + run.stderr);
    }
  }
}

Deno.test("targets create --help lists every kind with its settings, secrets marked", async () => {
  const { stdout } = expectExit(await runCliOn(null, ["targets", "create", "--help"]), EXIT.ok);
  for (const kind of TARGET_KINDS) assert.match(stdout, new RegExp(`^  ${kind}\\s`, "m"));
  assert.match(stdout, /^ {2}pagerduty\s+routing_key\*, url\?$/m);
  assert.match(stdout, /^ {2}telegram\s+bot_token\*, chat_id, url\?$/m);
  assert.match(stdout, /--set-env <setting=name>/);
});

apiSuite("CLI: targets of every kind", (test) => {
  test("pagerduty: the routing key from the environment, masked, never printed", async (t) => {
    const name = uniqueName("pager");
    const onCommandLine = expect(
      await cli(t, ["targets", "create", name, "pagerduty", "--set", `routing_key=${ROUTING_KEY}`]),
      EXIT.usage,
    );
    assert.match(
      onCommandLine.stderr,
      /A pagerduty target's routing_key is a secret: pass it with --set-env routing_key=NAME/,
    );
    assert.deepEqual(onCommandLine.calls, [], "refused before any call");

    const env = { PD_ROUTING_KEY: ROUTING_KEY };
    const runs = [
      expect(
        await cli(
          t,
          ["targets", "create", name, "pagerduty", "--set-env", "routing_key=PD_ROUTING_KEY"],
          { env },
        ),
        0,
      ),
      expect(await cli(t, ["targets", "get", name]), 0),
      expect(await cli(t, ["--json", "targets", "get", name]), 0),
      expect(await cli(t, ["targets", "list"]), 0),
      expect(
        await cli(t, ["targets", "update", name, "--set", "url=https://pd.example.com/v2/enqueue"]),
        0,
      ),
    ];
    assert.equal(runs[0].stdout, `Created pagerduty target ${name}.\n`);
    assert.match(runs[1].stdout, /^routing_key\s+…wxyz$/m);
    assert.equal(runs[2].json().data.routing_key, "…wxyz");
    assert.match(runs[3].stdout, /^NAME\s+KIND\s+URL\s+RECIPIENTS\s+SECRET\s+SETTINGS$/m);
    assert.match(runs[3].stdout, new RegExp(`^${name}\\s+pagerduty\\s+-.*routing_key=…wxyz$`, "m"));
    assert.equal(runs[4].stdout, `Updated pagerduty target ${name}.\n`);
    const moved = expect(await cli(t, ["--json", "targets", "get", name]), 0).json();
    assert.equal(moved.data.url, "https://pd.example.com/v2/enqueue");

    const update = expect(
      await cli(t, ["targets", "update", name, "--set", `routing_key=${ROUTING_KEY}`]),
      EXIT.usage,
    );
    assert.deepEqual(update.calls, ["GET /trpc/targets.get"], "no update was sent");
    const foreign = expect(
      await cli(t, ["targets", "update", name, "--set", "chat_id=-1001234"]),
      EXIT.invalid,
    );
    assert.match(foreign.stderr, /chat_id: is not a field of a pagerduty target/);
    const missing = expect(
      await cli(t, ["targets", "create", uniqueName("pager"), "pagerduty"]),
      EXIT.invalid,
    );
    assert.match(missing.stderr, /routing_key: is required for a pagerduty target/);
    nothingPrinted([...runs, onCommandLine, update, foreign], ROUTING_KEY);
  });

  test("telegram: the bot token from stdin, the chat id on the command line", async (t) => {
    const name = uniqueName("tg");
    const created = expect(
      await cli(
        t,
        [
          "--json",
          "targets",
          "create",
          name,
          "telegram",
          "--set-file",
          "bot_token=-",
          "--set",
          "chat_id=-1001234567890",
        ],
        { files: { "-": `${BOT_TOKEN}\n` } },
      ),
      0,
    );
    assert.equal(created.json().data.chat_id, "-1001234567890");
    assert.equal(created.json().data.bot_token, "…abcd");
    const got = expect(await cli(t, ["targets", "get", name]), 0);
    assert.match(got.stdout, /^bot_token\s+…abcd$/m);
    assert.match(got.stdout, /^chat_id\s+-1001234567890$/m);
    const changed = expect(
      await cli(t, ["targets", "update", name, "--set", "chat_id=@probe_alerts"]),
      0,
    );
    assert.match(
      expect(await cli(t, ["targets", "get", name]), 0).stdout,
      /^chat_id\s+@probe_alerts$/m,
    );

    const create = (...settings: string[]) =>
      cli(t, ["targets", "create", uniqueName("tg"), "telegram", ...settings]);
    const refused = [
      await create("--set", "chat_id"),
      await create("--set", "chat_id=1", "--set", "chat_id=2"),
      await create("--set-env", "bot_token=TG_UNSET", "--set", "chat_id=1"),
      await create("--set", `token=${BOT_TOKEN}`),
    ];
    for (const run of refused) {
      expect(run, EXIT.usage);
      assert.deepEqual(run.calls, []);
    }
    assert.match(refused[1].stderr, /The setting chat_id is given twice/);
    assert.match(refused[2].stderr, /The environment variable TG_UNSET \(--set-env\) is not set/);
    assert.match(refused[3].stderr, /token is a secret/, "a secret of another kind is refused too");
    const badChat = expect(
      await cli(t, ["targets", "update", name, "--set", "chat_id=not a chat"]),
      EXIT.invalid,
    );
    assert.match(badChat.stderr, /chat_id: must be a chat's numeric id/);
    nothingPrinted([created, got, changed, ...refused, badChat], BOT_TOKEN);
  });

  test("targets kinds: every kind's settings from the service", async (t) => {
    const run = expect(await cli(t, ["targets", "kinds"]), 0);
    assert.match(run.stdout, /^KIND\s+SETTING\s+REQUIRED\s+SECRET\s+DEFAULT\s+HELP$/m);
    assert.match(run.stdout, /^pagerduty\s+routing_key\s+yes\s+yes\s/m);
    assert.match(
      run.stdout,
      /^telegram\s+url\s+no\s+no\s+https:\/\/api\.telegram\.org\s/m,
    );
    const json = expect(await cli(t, ["--json", "targets", "kinds"]), 0).json();
    assert.deepEqual(json.data.map((k: { kind: string }) => k.kind), TARGET_KINDS);
  });
});
