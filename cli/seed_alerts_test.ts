/**
 * Seed files with alerting: probes' `label` and `expect`, projects' alert overrides, the global
 * alert policy and notification targets whose secrets come from the environment. Applied with a
 * typed client over a real app in-process, on PGlite and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { createProbeClient, type ProbeClient } from "@probe/client";
import {
  apiSuite,
  BASE,
  TEST_API_KEY,
  type TestContext,
  uniqueName,
} from "../server/testing/app.ts";
import { EXIT } from "./exit_codes.ts";
import { runCliOn } from "./testing.ts";
import { seedRefusal as refusal } from "./seed_testing.ts";
import { applySeed, parseSeedFile, SeedFileError, type Step } from "./seed.ts";

const SLACK_CREDENTIAL = "T0000/B0000/seed-test-credential";
const SLACK_URL = `https://hooks.slack.com/services/${SLACK_CREDENTIAL}`;
const HOOK_KEY = `whsec_${btoa("s".repeat(32))}`;

const clientOf = ({ app }: TestContext): ProbeClient =>
  createProbeClient({
    baseUrl: BASE,
    apiKey: TEST_API_KEY,
    fetch: (input, init) => app.handler(new Request(input, init)),
  });

const actions = (steps: Step[]) =>
  steps.map((s) => `${s.kind} ${[s.project, s.target].filter(Boolean).join(" ")} ${s.action}`);

Deno.test("a seed file never holds a secret, and names its variables properly", () => {
  const message = refusal({
    targets: [
      { name: "chat", kind: "slack", url: SLACK_URL },
      { name: "hook", kind: "webhook", url: "https://h.example/", secret: HOOK_KEY },
      { name: "hook2", kind: "webhook", url: "https://user:pw@h.example/" },
      { name: "chat2", kind: "discord", url_env: "not a name" },
      { name: "mail", kind: "mail" },
      { name: "hook3", kind: "webhook", url: "https://h.example/", recipients: ["a@b.example"] },
      { name: "hook4", kind: "webhook" },
      { name: "chat", kind: "discord", url_env: "DISCORD_URL" },
      { name: "log", kind: "mail", recipients: ["a@b.example"] },
    ],
  });
  assert.match(message, /^ {2}targets\.0\.url: a slack URL is a credential .* url_env$/m);
  assert.match(message, /^ {2}targets\.1\.secret: must not be in the file: .* secret_env$/m);
  assert.match(message, /^ {2}targets\.2\.url: must not hold a user name or password/m);
  assert.match(message, /^ {2}targets\.3\.url_env: must be the name of an environment variable/m);
  assert.match(message, /^ {2}targets\.4\.recipients: is required for a mail target$/m);
  assert.match(message, /^ {2}targets\.5\.recipients: is not a field of a webhook target$/m);
  assert.match(
    message,
    /^ {2}targets\.6\.url: a webhook target takes exactly one of url and url_env$/m,
  );
  assert.match(message, /^ {2}targets\.7\.name: listed twice$/m);
  assert.match(message, /^ {2}targets\.8\.name: .*reserved/m);
  for (const secret of [SLACK_CREDENTIAL, HOOK_KEY, "pw@"]) {
    assert.ok(!message.includes(secret), `the message repeats a secret: ${message}`);
  }
});

Deno.test("a seed file's expect, label and alert settings are checked by the shared rules", () => {
  const message = refusal({
    alerts: { failure_threshold: 0, bogus: true },
    projects: [{
      project: "a",
      alerts: { reminder_minutes: 3, project: "b" },
      probes: [
        { url: "http://x.example/", expect: { certificate_days: 7 } },
        { url: "https://x.example/", label: "", expect: { json: [{ path: "a", op: "eq" }] } },
      ],
    }],
  });
  assert.match(message, /^ {2}alerts\.failure_threshold: /m);
  assert.match(message, /^ {2}alerts: Unrecognized key: "bogus"$/m);
  assert.match(message, /^ {2}projects\.0\.alerts\.reminder_minutes: /m);
  assert.match(message, /^ {2}projects\.0\.alerts: Unrecognized key: "project"$/m);
  assert.match(
    message,
    /^ {2}projects\.0\.probes\.0\.expect\.certificate_days: certificate_days needs an https URL$/m,
  );
  assert.match(message, /^ {2}projects\.0\.probes\.1\.label: /m);
  assert.match(message, /^ {2}projects\.0\.probes\.1\.expect\.json\.0\.path: /m);
  assert.match(
    message,
    /^ {2}projects\.0\.probes\.1\.expect\.json\.0\.value: is required with eq$/m,
  );
});

Deno.test("the example seed file is a valid one", async () => {
  const path = new URL("./testdata/seed.yaml", import.meta.url);
  const file = parseSeedFile(await Deno.readTextFile(path), "seed.yaml");
  assert.deepEqual(file.targets.map((t) => t.name), ["seed-oncall", "seed-hook"]);
  assert.ok(file.projects[0].probes[0].expect);
});

apiSuite("seeding alerting", (test) => {
  test("targets: secrets from the environment, a generated key shown once, then unchanged", async (t) => {
    const client = clientOf(t);
    const [hook, chat, mail, fresh] = ["hook", "chat", "mail", "fresh"].map((p) => uniqueName(p));
    const file = parseSeedFile(
      `targets:
  - { name: ${hook}, kind: webhook, url: "https://hooks.example.com/a", secret_env: HOOK_KEY }
  - { name: ${chat}, kind: slack, url_env: SLACK_URL }
  - { name: ${mail}, kind: mail, recipients: [oncall@example.com] }
  - { name: ${fresh}, kind: webhook, url: "https://hooks.example.com/b" }
`,
      "seed.yaml",
    );
    const env = { HOOK_KEY, SLACK_URL };
    const first = await applySeed(client, file, { env });
    assert.deepEqual(actions(first), [
      `target ${hook} created`,
      `target ${chat} created`,
      `target ${mail} created`,
      `target ${fresh} created`,
    ]);
    const generated = first.map((s) => s.secret);
    assert.deepEqual(generated.slice(0, 3), [undefined, undefined, undefined]);
    assert.match(generated[3] ?? "", /^whsec_[A-Za-z0-9+/]+=*$/);

    assert.equal((await client.targets.get({ name: chat })).data.url, "https://hooks.slack.com/…");
    assert.equal((await client.targets.get({ name: hook })).data.secret, "whsec_…");
    assert.deepEqual((await client.targets.get({ name: mail })).data.recipients, [
      "oncall@example.com",
    ]);

    const second = await applySeed(client, file, { env });
    assert.ok(second.every((s) => s.action === "unchanged"), actions(second).join("\n"));
    assert.ok(second.every((s) => s.secret === undefined));
    const everything = JSON.stringify([first, second]);
    assert.ok(!everything.includes(SLACK_CREDENTIAL) && !everything.includes(HOOK_KEY));

    // Secrets cannot be compared: a new one is written only when asked.
    const rotated = { HOOK_KEY: `whsec_${btoa("r".repeat(32))}`, SLACK_URL: `${SLACK_URL}-new` };
    assert.ok(
      (await applySeed(client, file, { env: rotated })).every((s) => s.action === "unchanged"),
    );
    assert.deepEqual(
      actions(await applySeed(client, file, { env: rotated, updateSecrets: true })),
      [
        `target ${hook} updated`,
        `target ${chat} updated`,
        `target ${mail} unchanged`,
        `target ${fresh} unchanged`,
      ],
    );

    // What a read shows is compared: recipients, a webhook's URL, a chat URL's host.
    const changed = parseSeedFile(
      `targets:
  - { name: ${hook}, kind: webhook, url: "https://hooks.example.com/moved" }
  - { name: ${chat}, kind: slack, url_env: SLACK_URL }
  - { name: ${mail}, kind: mail, recipients: [ops@example.com] }
`,
      "seed.yaml",
    );
    const moved = { SLACK_URL: "https://chat.example.com/hooks/abc" };
    assert.deepEqual(actions(await applySeed(client, changed, { env: moved, dryRun: true })), [
      `target ${hook} updated`,
      `target ${chat} updated`,
      `target ${mail} updated`,
    ]);
    assert.equal((await client.targets.get({ name: chat })).data.url, "https://hooks.slack.com/…");
    await applySeed(client, changed, { env: moved });
    assert.equal(
      (await client.targets.get({ name: hook })).data.url,
      "https://hooks.example.com/moved",
    );
    assert.equal((await client.targets.get({ name: hook })).data.secret, "whsec_…", "key kept");
    assert.equal((await client.targets.get({ name: chat })).data.url, "https://chat.example.com/…");
    assert.deepEqual((await client.targets.get({ name: mail })).data.recipients, [
      "ops@example.com",
    ]);

    const otherKind = parseSeedFile(
      JSON.stringify({ targets: [{ name: mail, kind: "webhook", url: "https://h.example/" }] }),
      "seed.json",
    );
    await assert.rejects(
      () => applySeed(client, otherKind),
      (error: Error) =>
        error instanceof SeedFileError && /is a mail target on the service/.test(error.message),
    );
  });

  test("a secret that cannot be read stops the import before any change, naming the variable", async (t) => {
    const client = clientOf(t);
    const project = uniqueName("seed");
    const [hook, chat] = [uniqueName("hook"), uniqueName("chat")];
    const file = parseSeedFile(
      JSON.stringify({
        targets: [
          { name: hook, kind: "webhook", url: "https://h.example/", secret_env: "SEED_HOOK_KEY" },
          { name: chat, kind: "discord", url_env: "SEED_DISCORD_URL" },
        ],
        projects: [{ project }],
      }),
      "seed.json",
    );
    await assert.rejects(
      () => applySeed(client, file, { env: { SEED_HOOK_KEY: HOOK_KEY } }),
      (error: Error) => {
        assert.ok(error instanceof SeedFileError);
        assert.match(
          error.message,
          /^ {2}targets\.1\.url_env: the environment variable SEED_DISCORD_URL is not set$/m,
        );
        assert.ok(!error.message.includes("targets.0"));
        return true;
      },
    );
    const badValues = { SEED_HOOK_KEY: "whsec_short-secret-value", SEED_DISCORD_URL: "ftp://x" };
    await assert.rejects(
      () => applySeed(client, file, { env: badValues }),
      (error: Error) => {
        assert.match(
          error.message,
          /^ {2}targets\.0\.secret_env: the value of SEED_HOOK_KEY must be "whsec_"/m,
        );
        assert.match(
          error.message,
          /^ {2}targets\.1\.url_env: the value of SEED_DISCORD_URL must be an absolute http/m,
        );
        assert.ok(
          !error.message.includes("short-secret-value") && !error.message.includes("ftp://x"),
        );
        return true;
      },
    );
    const nothing = await client.targets.list();
    assert.ok(!nothing.data.some((d) => d.name === hook || d.name === chat));
    assert.equal((await client.projects.list({ project })).meta.count, 0);
  });

  test("probes' label and expect: created, unchanged, rewritten with the same id", async (t) => {
    const client = clientOf(t);
    const project = uniqueName("seed");
    const yaml = (expect: string, label = "") =>
      `projects:
  - project: ${project}
    probes:
      - url: https://shop.example.com/health${label}
        expect: ${expect}
`;
    const first = parseSeedFile(
      yaml(
        "{ status: [2xx, 301], json: [{ path: /status, op: eq, value: UP }] }",
        "\n        label: Shop",
      ),
      "seed.yaml",
    );
    assert.deepEqual(actions(await applySeed(client, first)), [
      `project ${project} created`,
      `probe ${project} https://shop.example.com/health created`,
    ]);
    const [probe] = (await client.probes.listByProject({ project })).data;
    assert.equal(probe.label, "Shop");
    assert.deepEqual(probe.expect, {
      status: ["2xx", 301],
      json: [{ path: "/status", op: "eq", value: "UP" }],
    });
    assert.deepEqual(actions(await applySeed(client, first)), [
      `project ${project} unchanged`,
      `probe ${project} https://shop.example.com/health unchanged`,
    ]);

    // Without a label, and with another expect: a rewrite; the id follows method and URL only.
    const second = parseSeedFile(yaml("{ certificate_days: 14 }"), "seed.yaml");
    assert.deepEqual(actions(await applySeed(client, second)), [
      `project ${project} unchanged`,
      `probe ${project} https://shop.example.com/health rewritten`,
    ]);
    const [after] = (await client.probes.listByProject({ project })).data;
    assert.equal(after.probe_id, probe.probe_id);
    assert.deepEqual([after.label, after.expect], [null, { certificate_days: 14 }]);
    assert.equal(
      actions(await applySeed(client, second))[1],
      `probe ${project} https://shop.example.com/health unchanged`,
    );
  });

  test("alert overrides of projects and the global policy: updated once, then unchanged", async (t) => {
    const client = clientOf(t);
    const project = uniqueName("seed");
    const hook = uniqueName("hook");
    const before = (await client.alerts.get()).data;
    const file = parseSeedFile(
      `targets:
  - { name: ${hook}, kind: mail, recipients: [a@example.com] }
alerts: { reminder_minutes: 60, notify_degraded: true }
projects:
  - project: ${project}
    alerts: { targets: [log, ${hook}], failure_threshold: 1, enabled: null }
`,
      "seed.yaml",
    );
    const dry = await applySeed(client, file, { dryRun: true });
    assert.deepEqual(actions(dry), [
      `target ${hook} created`,
      "alerts policy updated",
      `project ${project} created`,
      `alerts ${project} overrides updated`,
    ]);
    assert.deepEqual((await client.alerts.get()).data, before, "a dry run changes nothing");
    assert.equal((await client.projects.list({ project })).meta.count, 0);

    assert.deepEqual(actions(await applySeed(client, file)), actions(dry));
    assert.deepEqual((await client.alerts.get()).data, {
      ...before,
      reminder_minutes: 60,
      notify_degraded: true,
    });
    const { data: alerts } = await client.alerts.getProject({ project });
    assert.deepEqual(alerts.overrides, {
      enabled: null,
      targets: ["log", hook],
      failure_threshold: 1,
      success_threshold: null,
      reminder_minutes: null,
      notify_degraded: null,
      notify_recovered: null,
      location_quorum: null,
      escalation: null,
      flap_changes: null,
      flap_minutes: null,
    });
    assert.deepEqual(actions(await applySeed(client, file)), [
      `target ${hook} unchanged`,
      "alerts policy unchanged",
      `project ${project} unchanged`,
      `alerts ${project} overrides unchanged`,
    ]);

    // null in the file inherits again.
    const inherit = parseSeedFile(
      `projects:\n  - project: ${project}\n    alerts: { failure_threshold: null }\n`,
      "seed.yaml",
    );
    assert.deepEqual(
      actions(await applySeed(client, inherit))[1],
      `alerts ${project} overrides updated`,
    );
    const again = (await client.alerts.getProject({ project })).data;
    assert.equal(again.overrides.failure_threshold, null);
    assert.deepEqual(again.overrides.targets, ["log", hook], "fields not in the file stay");

    await client.alerts.updateProject({ project, targets: null });
    await client.alerts.update({
      reminder_minutes: before.reminder_minutes,
      notify_degraded: before.notify_degraded,
    });
  });

  test("deno task cli import: secrets from the environment, the generated key printed once", async (t) => {
    const [chat, fresh] = [uniqueName("chat"), uniqueName("fresh")];
    const yaml = `targets:
  - { name: ${chat}, kind: slack, url_env: SEED_SLACK_URL }
  - { name: ${fresh}, kind: webhook, url: "https://hooks.example.com/c" }
`;
    const run = (args: string[], env: Record<string, string> = {}) =>
      runCliOn(t.app, args, { env, files: { "seed.yaml": yaml } });

    const unset = await run(["import", "seed.yaml"]);
    assert.equal(unset.code, EXIT.usage);
    assert.match(
      unset.stderr,
      /targets\.0\.url_env: the environment variable SEED_SLACK_URL is not set/,
    );

    const env = { SEED_SLACK_URL: SLACK_URL };
    const first = await run(["import", "seed.yaml"], env);
    assert.equal(first.code, EXIT.ok, first.stderr);
    assert.match(first.stdout, new RegExp(`^target\\s+-\\s+${chat}\\s+created$`, "m"));
    assert.match(
      first.stdout,
      new RegExp(
        `^Signing key of webhook target ${fresh}, shown this once \\(keep it now\\):\\nwhsec_\\S+$`,
        "m",
      ),
    );
    assert.ok(!first.stdout.includes(SLACK_CREDENTIAL));

    const second = await run(["--json", "import", "seed.yaml"], env);
    assert.equal(second.code, EXIT.ok, second.stderr);
    const answer = JSON.parse(second.stdout);
    assert.equal(answer.meta.unchanged, 2);
    assert.ok(!second.stdout.includes("whsec_"), "the key is printed once only");
  });
});
