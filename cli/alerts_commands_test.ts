/**
 * The CLI's alerting commands (`alerts`, `targets`, `maintenance`, `incidents`, `probes run`,
 * probes' `--label` and `--expect`) run in-process against a real app: the CLI's fetch hands each
 * request to the app's handler. Every case runs on PGlite and, with TEST_DATABASE_URL, on
 * PostgreSQL.
 */
import assert from "node:assert/strict";
import { apiSuite, BASE, type TestContext, uniqueName } from "../server/testing/app.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { EXIT } from "./exit_codes.ts";
import { type CliOptions, expectExit, runCliOn } from "./testing.ts";

/** Runs the CLI against the test app, with extra environment and files (`-` is stdin). */
const cli = ({ app }: TestContext, args: string[], options: CliOptions = {}) =>
  runCliOn(app, args, options);
const expect = expectExit;

const SLACK_CREDENTIAL = "T0000/B0000/cli-test-credential";
const SLACK_URL = `https://hooks.slack.com/services/${SLACK_CREDENTIAL}`;
const HOOK_KEY = `whsec_${btoa("k".repeat(32))}`;

Deno.test("--help works on every new level and exits 0", async (t) => {
  const levels = [
    ["incidents"],
    ["incidents", "list"],
    ["incidents", "get"],
    ["incidents", "ack"],
    ["alerts"],
    ["alerts", "get"],
    ["alerts", "set"],
    ["targets"],
    ...["list", "get", "create", "update", "delete", "test"].map((v) => ["targets", v]),
    ["maintenance"],
    ["maintenance", "list"],
    ["maintenance", "add"],
    ["maintenance", "delete"],
    ["probes", "run"],
  ];
  for (const level of levels) {
    await t.step(level.join(" "), async () => {
      const { stdout } = expectExit(await runCliOn(null, [...level, "--help"]), EXIT.ok);
      assert.match(stdout, new RegExp(`^Usage: deno task cli ${level.join(" ")}`));
    });
  }
});

apiSuite("CLI: alerting commands", (test) => {
  test("alerts get and set: the global policy", async (t) => {
    const set = expect(
      await cli(t, [
        "--json",
        "alerts",
        "set",
        "--failure-threshold",
        "4",
        "--reminder-minutes",
        "30",
        "--targets",
        "log",
        "--notify-degraded",
        "true",
      ]),
      0,
    ).json();
    assert.deepEqual(set.data, {
      enabled: true,
      targets: ["log"],
      failure_threshold: 4,
      success_threshold: 2,
      reminder_minutes: 30,
      notify_degraded: true,
      notify_recovered: true,
      location_quorum: "majority",
      escalation: [],
      flap_changes: 0,
      flap_minutes: 30,
    });
    const got = expect(await cli(t, ["alerts", "get"]), 0).stdout;
    assert.match(got, /^failure_threshold\s+4$/m);
    assert.match(got, /^targets\s+log$/m);
    assert.match(got, /^notify_degraded\s+true$/m);

    const inherit = expect(await cli(t, ["alerts", "set", "--reminder-minutes", "inherit"]), 2);
    assert.match(inherit.stderr, /"inherit" is for a project's overrides.*--reminder-minutes/);
    assert.deepEqual(inherit.calls, [], "refused before any call");
    const bad = expect(await cli(t, ["alerts", "set", "--reminder-minutes", "3"]), EXIT.invalid);
    assert.match(bad.stderr, /^ {2}reminder_minutes: /m);
    expect(await cli(t, ["alerts", "set", "--enabled", "maybe"]), EXIT.usage);
    const none = expect(await cli(t, ["alerts", "set"]), EXIT.invalid);
    assert.match(none.stderr, /No fields were provided/);

    expect(
      await cli(t, [
        "alerts",
        "set",
        "--failure-threshold",
        "3",
        "--reminder-minutes",
        "0",
        "--notify-degraded",
        "false",
      ]),
      0,
    );
  });

  test("alerts set --escalation: steps as MINUTES=TARGETS;…, none, inherit", async (t) => {
    const project = uniqueName();
    expect(await cli(t, ["projects", "create", project]), 0);
    const escalate = (steps: string) =>
      cli(t, ["--json", "alerts", "set", "--project", project, "--escalation", steps]);
    const set = expect(await escalate("10=log;30=log"), 0).json();
    assert.deepEqual(set.data.overrides.escalation, [
      { after_minutes: 10, targets: ["log"] },
      { after_minutes: 30, targets: ["log"] },
    ]);
    const shown = expect(await cli(t, ["alerts", "get", "--project", project]), 0).stdout;
    assert.match(shown, /^escalation\s+10=log;30=log\s+10=log;30=log$/m);
    assert.deepEqual(expect(await escalate("none"), 0).json().data.overrides.escalation, []);
    assert.equal(expect(await escalate("inherit"), 0).json().data.overrides.escalation, null);
    const late = expect(await escalate("30=log;10=log"), EXIT.invalid);
    assert.match(late.stderr, /"path":"escalation\.1\.after_minutes"/);
    const garbled = expect(await escalate("10"), EXIT.usage);
    assert.deepEqual(garbled.calls, [], "refused before any call");
  });

  test("alerts get and set --project: overrides, inherit sends null", async (t) => {
    const project = uniqueName();
    expect(await cli(t, ["projects", "create", project]), 0);
    const set = expect(
      await cli(t, [
        "--json",
        "alerts",
        "set",
        "--project",
        project,
        "--failure-threshold",
        "1",
        "--enabled",
        "false",
      ]),
      0,
    ).json();
    assert.equal(set.data.overrides.failure_threshold, 1);
    assert.equal(set.data.effective.enabled, false);

    const shown = expect(await cli(t, ["alerts", "get", "--project", project]), 0).stdout;
    assert.match(shown, /^FIELD\s+OVERRIDE\s+EFFECTIVE$/m);
    assert.match(shown, /^failure_threshold\s+1\s+1$/m);
    assert.match(shown, /^success_threshold\s+inherit\s+2$/m);
    assert.match(shown, /^targets\s+inherit\s+log$/m);

    const back = expect(
      await cli(t, ["--json", "alerts", "set", "--project", project, "--enabled", "inherit"]),
      0,
    ).json();
    assert.equal(back.data.overrides.enabled, null);
    assert.equal(back.data.effective.enabled, true);
    assert.equal(back.data.overrides.failure_threshold, 1, "options not given stay");

    expect(await cli(t, ["alerts", "get", "--project", uniqueName("missing")]), EXIT.notFound);
    const ghost = expect(
      await cli(t, ["alerts", "set", "--project", project, "--targets", "log,nobody-here"]),
      EXIT.invalid,
    );
    assert.match(ghost.stderr, /^ {2}targets\.1: /m);
  });

  test("targets: secrets come from the environment or stdin, and are never printed", async (t) => {
    // A webhook without a key: the generated one is printed once, by create.
    const hook = uniqueName("hook");
    const created = expect(
      await cli(t, ["targets", "create", hook, "webhook", "--url", "https://hooks.example.com/a"]),
      0,
    );
    assert.match(created.stdout, new RegExp(`^Created webhook target ${hook}\\.`));
    const generated = created.stdout.match(/^(whsec_\S+)$/m)?.[1];
    assert.ok(generated, created.stdout);
    const got = expect(await cli(t, ["targets", "get", hook]), 0).stdout;
    assert.match(got, /^secret\s+whsec_…$/m);
    assert.ok(!got.includes(generated));

    // A Slack URL is a credential: not on the command line.
    const slack = uniqueName("slack");
    const refused = expect(
      await cli(t, ["targets", "create", slack, "slack", "--url", SLACK_URL]),
      EXIT.usage,
    );
    assert.match(refused.stderr, /A slack URL is a credential: pass it with --url-env/);
    assert.ok(!refused.stderr.includes(SLACK_CREDENTIAL));
    assert.deepEqual(refused.calls, [], "refused before any call");
    const unset = expect(
      await cli(t, ["targets", "create", slack, "slack", "--url-env", "SLACK_ALERTS_URL"]),
      EXIT.usage,
    );
    assert.match(
      unset.stderr,
      /The environment variable SLACK_ALERTS_URL \(--url-env\) is not set/,
    );
    expect(await cli(t, ["targets", "get", slack]), EXIT.notFound);

    const env = { SLACK_ALERTS_URL: SLACK_URL, HOOK_KEY };
    const runs = [
      expect(
        await cli(t, ["targets", "create", slack, "slack", "--url-env", "SLACK_ALERTS_URL"], {
          env,
        }),
        0,
      ),
      expect(await cli(t, ["--json", "targets", "get", slack], { env }), 0),
      expect(await cli(t, ["targets", "list"], { env }), 0),
      expect(await cli(t, ["--json", "targets", "list"], { env }), 0),
    ];
    assert.match(runs[0].stdout, new RegExp(`^Created slack target ${slack}\\.$`, "m"));
    assert.equal(runs[1].json().data.url, "https://hooks.slack.com/…");
    assert.match(
      runs[2].stdout,
      /^NAME\s+KIND\s+URL\s+RECIPIENTS\s+SECRET\s+SETTINGS\nlog\s+log\s/,
    );
    assert.match(
      runs[2].stdout,
      new RegExp(`^${slack}\\s+slack\\s+https://hooks\\.slack\\.com/…`, "m"),
    );

    // A webhook's key from stdin, then a new one from the environment: neither is printed.
    const keyed = uniqueName("hook");
    runs.push(
      expect(
        await cli(
          t,
          [
            "targets",
            "create",
            keyed,
            "webhook",
            "--url",
            "https://hooks.example.com/b",
            "--secret-file",
            "-",
          ],
          { files: { "-": `${HOOK_KEY}\n` } },
        ),
        0,
      ),
      expect(await cli(t, ["targets", "update", keyed, "--secret-env", "HOOK_KEY"], { env }), 0),
      expect(await cli(t, ["targets", "get", keyed]), 0),
    );
    assert.equal(runs.at(-3)!.stdout, `Created webhook target ${keyed}.\n`);
    assert.equal(runs.at(-2)!.stdout, `Updated webhook target ${keyed}.\n`);
    for (const run of runs) {
      const printed = run.stdout + run.stderr;
      assert.ok(!printed.includes(SLACK_CREDENTIAL), printed);
      assert.ok(!printed.includes(HOOK_KEY), printed);
      assert.ok(!printed.includes(generated), printed);
    }

    const onCommandLine = expect(
      await cli(t, ["targets", "update", slack, "--url", SLACK_URL]),
      EXIT.usage,
    );
    assert.match(onCommandLine.stderr, /A slack URL is a credential/);
    assert.deepEqual(onCommandLine.calls, ["GET /trpc/targets.get"], "no update was sent");
    expect(
      await cli(t, ["targets", "update", keyed, "--recipients", "a@example.com"]),
      EXIT.invalid,
    );
    expect(await cli(t, ["targets", "create", uniqueName("x"), "pager"]), EXIT.usage);
    expect(
      await cli(t, ["targets", "create", hook, "mail", "--recipients", "a@example.com"]),
      EXIT.conflict,
    );
  });

  test("targets: mail recipients, test, delete (refused while in use)", async (t) => {
    const mail = uniqueName("mail");
    const created = expect(
      await cli(t, [
        "--json",
        "targets",
        "create",
        mail,
        "mail",
        "--recipients",
        "a@example.com, b@example.com",
      ]),
      0,
    ).json();
    assert.deepEqual(created.data.recipients, ["a@example.com", "b@example.com"]);
    expect(await cli(t, ["targets", "update", mail, "--recipients", "c@example.com"]), 0);
    assert.match(
      expect(await cli(t, ["targets", "get", mail]), 0).stdout,
      /^recipients\s+c@example\.com$/m,
    );

    const tested = expect(await cli(t, ["targets", "test", "log"]), 0);
    assert.match(tested.stdout, /^TARGET\s+OUTCOME\s+ATTEMPTS\s+ERROR\nlog\s+delivered\s+1\s+-$/m);
    expect(await cli(t, ["targets", "test", uniqueName("missing")]), EXIT.notFound);

    const project = uniqueName();
    expect(await cli(t, ["projects", "create", project]), 0);
    expect(await cli(t, ["alerts", "set", "--project", project, "--targets", mail]), 0);
    const inUse = expect(await cli(t, ["targets", "delete", mail]), EXIT.conflict);
    assert.match(inUse.stderr, /Notification target is in use/);
    expect(await cli(t, ["alerts", "set", "--project", project, "--targets", "inherit"]), 0);
    assert.match(
      expect(await cli(t, ["targets", "delete", mail]), 0).stdout,
      new RegExp(`^Deleted target ${mail}\\.$`, "m"),
    );
    expect(await cli(t, ["targets", "get", mail]), EXIT.notFound);
    expect(await cli(t, ["targets", "delete", "log"]), EXIT.conflict);
  });

  test("maintenance: add for a duration, list, delete", async (t) => {
    const project = uniqueName();
    expect(await cli(t, ["projects", "create", project]), 0);
    const added = expect(
      await cli(t, ["maintenance", "add", project, "--for", "2h", "--reason", "Upgrade"]),
      0,
    );
    assert.match(
      added.stdout,
      new RegExp(`^Added maintenance window \\d+ to ${project}: .* \\(active\\)\\.$`, "m"),
    );
    const later = expect(
      await cli(t, [
        "--json",
        "maintenance",
        "add",
        project,
        "--starts",
        "2031-03-01T10:00:00+02:00",
        "--ends",
        "2031-03-01T12:00:00+02:00",
      ]),
      0,
    ).json();
    assert.equal(later.data.starts_at, "2031-03-01T08:00:00.000Z");
    const span = expect(
      await cli(t, [
        "--json",
        "maintenance",
        "add",
        project,
        "--starts",
        "2031-04-01T00:00:00Z",
        "--for",
        "1d12h",
      ]),
      0,
    ).json();
    assert.equal(span.data.ends_at, "2031-04-02T12:00:00.000Z");

    const listed = expect(await cli(t, ["maintenance", "list", project]), 0).stdout;
    assert.match(listed, /^ID\s+STARTS_AT\s+ENDS_AT\s+STATE\s+REASON$/m);
    assert.match(listed, /\sactive\s+Upgrade$/m);
    const upcoming = expect(
      await cli(t, ["--json", "maintenance", "list", project, "--state", "upcoming"]),
      0,
    ).json();
    assert.deepEqual(upcoming.data.map((w: { id: string }) => w.id), [later.data.id, span.data.id]);

    expect(await cli(t, ["maintenance", "delete", project, later.data.id]), 0);
    expect(await cli(t, ["maintenance", "delete", project, later.data.id]), EXIT.notFound);

    const backwards = expect(
      await cli(t, [
        "maintenance",
        "add",
        project,
        "--starts",
        "2031-03-01T12:00:00Z",
        "--ends",
        "2031-03-01T10:00:00Z",
      ]),
      EXIT.invalid,
    );
    assert.match(backwards.stderr, /^ {2}ends_at: must be after starts_at$/m);
    const neither = expect(await cli(t, ["maintenance", "add", project]), EXIT.usage);
    assert.match(neither.stderr, /Give --ends or --for/);
    assert.deepEqual(neither.calls, []);
    expect(await cli(t, ["maintenance", "add", project, "--for", "soon"]), EXIT.usage);
    expect(
      await cli(t, [
        "maintenance",
        "add",
        project,
        "--for",
        "1h",
        "--ends",
        "2031-01-01T00:00:00Z",
      ]),
      EXIT.usage,
    );
    expect(
      await cli(t, ["maintenance", "add", uniqueName("missing"), "--for", "1h"]),
      EXIT.notFound,
    );
  });

  test("a verb's own --url is the probe's or target's; the service's goes before the resource", async (t) => {
    const project = uniqueName();
    expect(await cli(t, ["projects", "create", project]), 0);
    const probeId = expect(
      await cli(t, ["--json", "probes", "create", project, "https://a.example.com/"]),
      0,
    ).json().data.probe_id;
    const moved = expect(
      await cli(t, [
        "--json",
        "probes",
        "update",
        project,
        probeId,
        "--url",
        "https://b.example.com/",
      ]),
      0,
    );
    assert.equal(moved.json().data.url, "https://b.example.com/");
    assert.deepEqual(moved.calls, ["POST /trpc/probes.update"]);

    // Global options after the verb still work where the verb has none of its own by that name.
    const listed = expect(await cli(t, ["projects", "get", project, "--json"]), 0);
    assert.equal(listed.json().data.project, project);
    const elsewhere = await cli(t, ["projects", "get", project, "--url", "http://other.test"]);
    expect(elsewhere, 0);
    assert.deepEqual(elsewhere.urls.map((u) => new URL(u).origin), ["http://other.test"]);
    assert.deepEqual(moved.urls.map((u) => new URL(u).origin), [BASE]);
  });

  test("probes: --label and --expect on create and update, --expect-file, clearing", async (t) => {
    const project = uniqueName();
    expect(await cli(t, ["projects", "create", project]), 0);
    const created = expect(
      await cli(t, [
        "--json",
        "probes",
        "create",
        project,
        "https://shop.example.com/health",
        "--label",
        "Shop health",
        "--expect",
        '{"status":["2xx"],"body":{"contains":["ok"]}}',
      ]),
      0,
    ).json();
    const probeId = created.data.probe_id;
    const got = expect(await cli(t, ["--json", "probes", "get", project, probeId]), 0).json();
    assert.equal(got.data.label, "Shop health");
    assert.deepEqual(got.data.expect, { status: ["2xx"], body: { contains: ["ok"] } });
    const human = expect(await cli(t, ["probes", "get", project, probeId]), 0).stdout;
    assert.match(human, /^label\s+Shop health$/m);
    assert.match(human, /^state\s+unknown$/m);

    const yaml = "json:\n  - { path: /status, op: eq, value: UP }\ncertificate_days: 14\n";
    expect(
      await cli(t, ["probes", "update", project, probeId, "--expect-file", "expect.yaml"], {
        files: { "expect.yaml": yaml },
      }),
      0,
    );
    const after = expect(await cli(t, ["--json", "probes", "get", project, probeId]), 0).json();
    assert.deepEqual(after.data.expect, {
      json: [{ path: "/status", op: "eq", value: "UP" }],
      certificate_days: 14,
    });
    assert.equal(after.data.probe_id, probeId, "expect never changes the id");

    expect(await cli(t, ["probes", "update", project, probeId, "--no-expect", "--no-label"]), 0);
    const cleared = expect(await cli(t, ["--json", "probes", "get", project, probeId]), 0).json();
    assert.deepEqual([cleared.data.label, cleared.data.expect], [null, null]);

    const badOp = expect(
      await cli(t, [
        "probes",
        "update",
        project,
        probeId,
        "--expect",
        '{"json":[{"path":"/a","op":"matches","value":1}]}',
      ]),
      EXIT.invalid,
    );
    assert.match(badOp.stderr, /^ {2}expect\.json\.0\.op: /m);
    const onHttp = expect(
      await cli(t, [
        "probes",
        "create",
        project,
        "http://shop.example.com/",
        "--expect",
        '{"certificate_days":7}',
      ]),
      EXIT.invalid,
    );
    assert.match(
      onHttp.stderr,
      /^ {2}expect\.certificate_days: certificate_days needs an https URL$/m,
    );
    expect(await cli(t, ["probes", "update", project, probeId, "--expect", "{nope"]), EXIT.usage);
    expect(
      await cli(t, ["probes", "update", project, probeId, "--expect-file", "missing.yaml"]),
      EXIT.usage,
    );
  });

  test("probes run, then incidents list, get and ack", async (t) => {
    const target = await startTarget();
    try {
      const project = uniqueName();
      expect(await cli(t, ["projects", "create", project]), 0);
      expect(await cli(t, ["alerts", "set", "--project", project, "--failure-threshold", "1"]), 0);
      const probeId = expect(
        await cli(t, [
          "--json",
          "probes",
          "create",
          project,
          `${target.origin}/health`,
          "--label",
          "Local health",
          "--expect",
          '{"json":[{"path":"/status","op":"eq","value":"UP"}]}',
        ]),
        0,
      ).json().data.probe_id;

      const passed = expect(await cli(t, ["--json", "probes", "run", project, probeId]), 0).json();
      assert.deepEqual(
        [passed.data.outcome, passed.data.trigger, passed.data.failed_checks],
        ["up", "manual", []],
      );
      assert.equal(
        expect(await cli(t, ["incidents", "list", "--project", project]), 0).stdout,
        "No incidents.\n",
      );

      target.setHealth(200, { status: "DOWN" });
      const failed = expect(await cli(t, ["probes", "run", project, probeId]), 0).stdout;
      assert.match(failed, /^outcome\s+down$/m);
      assert.match(failed, /^trigger\s+manual$/m);
      assert.match(failed, /^FAILED_CHECK\s+EXPECTED\s+SEEN\njson\.0\s+.*\s+"DOWN"$/m);

      const table = expect(await cli(t, ["incidents", "list", "--project", project]), 0).stdout;
      assert.match(
        table,
        /^ID\s+PROJECT\s+LABEL\s+STATE\s+STARTED_AT\s+DURATION_S\s+CAUSE\s+ACKNOWLEDGED$/m,
      );
      assert.match(
        table,
        new RegExp(`^\\d+\\s+${project}\\s+Local health\\s+open\\s+\\S+Z\\s+-\\s+.*\\s+no$`, "m"),
      );
      const listed = expect(
        await cli(t, ["--json", "incidents", "list", "--project", project, "--state", "open"]),
        0,
      ).json();
      assert.equal(listed.meta.count, 1);
      const id = listed.data[0].id;

      const shown = expect(await cli(t, ["incidents", "get", id]), 0).stdout;
      assert.match(shown, /^state\s+open$/m);
      assert.match(shown, /^runs_failed\s+1$/m);
      assert.match(
        shown,
        /^NOTIFICATION\s+TYPE\s+TARGET\s+STATUS\s+ATTEMPTS\s+CREATED_AT\s+ERROR$/m,
      );
      assert.match(shown, /^msg_[0-9a-f]{32}\s+probe\.down\s+log\s+pending\s+0\s/m);

      const acked = expect(await cli(t, ["incidents", "ack", id]), 0).stdout;
      assert.equal(acked, `Acknowledged incident ${id} (Local health): no more reminders.\n`);
      const again = expect(await cli(t, ["--json", "incidents", "get", id]), 0).json();
      assert.equal(typeof again.data.acknowledged_at, "string");

      expect(await cli(t, ["projects", "update", project, "--status", "disabled"]), 0);
      expect(await cli(t, ["incidents", "ack", id]), EXIT.conflict);
      expect(await cli(t, ["probes", "run", project, probeId]), EXIT.conflict);
      expect(await cli(t, ["incidents", "get", "999999999"]), EXIT.notFound);
      expect(await cli(t, ["probes", "run", project, "0000000000000000"]), EXIT.notFound);
      expect(await cli(t, ["incidents", "list", "--state", "closed"]), EXIT.usage);
      expect(await cli(t, ["incidents", "list", "--limit", "0"]), EXIT.invalid);
    } finally {
      await target.close();
    }
  });
});
