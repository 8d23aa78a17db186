/**
 * `deno task cli export`: a rich configuration built through the API is exported, seeded with
 * `import --prune` into a fresh instance, and exported again: the texts and the API reads of the
 * two instances must match, and no secret may be in the file. The CLI runs in-process against
 * real apps, on PGlite and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { createProbeClient, type ProbeClient } from "@probe/client";
import { parse as parseYaml } from "yaml";
import type { App } from "../server/app.ts";
import { backends, BASE, startTestApp, TEST_API_KEY } from "../server/testing/app.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { EXIT } from "./exit_codes.ts";
import { type CliOptions, runCliOn } from "./testing.ts";
import { parseSeedFile, SeedFileError } from "./seed.ts";

const SLACK_CREDENTIAL = "T0000/B0000/export-test-credential";
const SLACK_URL = `https://hooks.slack.com/services/${SLACK_CREDENTIAL}`;
const DISCORD_CREDENTIAL = "123456/export-discord-credential";
const DISCORD_URL = `https://discord.com/api/webhooks/${DISCORD_CREDENTIAL}`;
const OWN_KEY = `whsec_${btoa("k".repeat(32))}`;
const BEARER = "Bearer export-test-bearer-token";
const API_KEY_HEADER = "export-test-api-key-value";
const COOKIE = "session=export-test-cookie-value";

const clientOf = (app: App): ProbeClient =>
  createProbeClient({
    baseUrl: BASE,
    apiKey: TEST_API_KEY,
    fetch: (input, init) => app.handler(new Request(input, init)),
  });

/** Runs the CLI in-process against `app`; files live in `files`. */
const cli = (app: App, args: string[], options: CliOptions = {}) => runCliOn(app, args, options);

function ok(run: { code: number; stdout: string; stderr: string }) {
  assert.equal(run.code, EXIT.ok, `exit ${run.code}\n${run.stdout}\n${run.stderr}`);
  return run;
}

/**
 * Builds a configuration with every part the export covers; answers the generated key and a
 * location's token.
 */
async function configure(
  client: ProbeClient,
  loopback: string,
): Promise<{ key: string; locationToken: string }> {
  const created = await client.targets.create({
    name: "ops-hook",
    kind: "webhook",
    url: "https://hooks.example.com/probe-alerts",
  });
  await client.targets.create({
    name: "signed.hook",
    kind: "webhook",
    url: "https://hooks.example.com/b",
    secret: OWN_KEY,
  });
  await client.targets.create({ name: "team-slack", kind: "slack", url: SLACK_URL });
  await client.targets.create({ name: "team-discord", kind: "discord", url: DISCORD_URL });
  await client.targets.create({
    name: "oncall",
    kind: "mail",
    recipients: ["oncall@example.com", "ops@example.com"],
  });
  await client.alerts.update({
    targets: ["log", "team-slack", "ops-hook"],
    failure_threshold: 2,
    reminder_minutes: 60,
    notify_degraded: true,
    escalation: [{ after_minutes: 15, targets: ["oncall"] }],
  });

  // Remote locations: by name and label, never their tokens.
  const office = await client.locations.create({ name: "office", label: "Office LAN" });
  await client.locations.create({ name: "eu-1" });

  await client.projects.create({ project: "shop", label: "Web shop", description: "The shop" });
  await client.projects.create({ project: "blog" });
  await client.projects.update({ project: "blog", status: "disabled" });
  await client.projects.create({
    project: "api.v2",
    label: "API",
    default_locations: ["local", "office"],
  });

  await client.probes.create({
    project: "shop",
    url: "https://shop.example.com/health",
    label: "Shop health",
    latency: 800,
    interval_seconds: 300,
    timeout_ms: 5_000,
    expect: { status: ["2xx", 301], json: [{ path: "/status", op: "eq", value: "UP" }] },
    locations: ["eu-1", "local"],
  });
  await client.probes.create({ project: "api.v2", url: "https://api.example.com/v2/ping" });
  await client.probes.create({
    project: "shop",
    url: "https://shop.example.com/api/cart",
    method: "POST",
    headers: {
      "content-type": "application/json",
      Authorization: BEARER,
      "X-Api-Key": API_KEY_HEADER,
    },
    body: { ping: true, items: [1, "two"] },
  });
  await client.probes.create({ project: "shop", url: `${loopback}/health`, method: "HEAD" });
  await client.probes.create({
    project: "blog",
    url: "https://blog.example.com/",
    headers: { Cookie: COOKIE, accept: "text/html" },
  });
  await client.alerts.updateProject({
    project: "shop",
    targets: ["oncall", "signed.hook"],
    failure_threshold: 1,
    notify_recovered: false,
    escalation: [{ after_minutes: 5, targets: ["team-slack"] }, {
      after_minutes: 30,
      targets: ["oncall", "log"],
    }],
  });
  await client.alerts.updateProject({ project: "blog", enabled: false });

  const hour = 3_600_000;
  const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms).toISOString();
  await client.maintenance.create({
    project: "shop",
    starts_at: "2024-03-01T10:00:00+02:00",
    ends_at: "2024-03-01T12:00:00+02:00",
    reason: "Database upgrade",
  });
  await client.maintenance.create({ project: "shop", starts_at: at(0), ends_at: at(2 * hour) });
  await client.maintenance.create({
    project: "blog",
    // Under way now: an active window travels too.
    starts_at: new Date(Date.now() - hour).toISOString(),
    ends_at: new Date(Date.now() + 24 * hour).toISOString(),
    reason: "Moving hosts",
  });
  await client.statusPages.update({ project: "shop", public: true, title: "Shop status" });
  await client.statusPages.update({ project: "api.v2", show_urls: true });
  await client.settings.updateIamAlive({ enabled: true, interval_hours: 6, channels: ["log"] });

  // Not configuration: a badge token and a result.
  await client.badges.create({ project: "shop" });
  const [loopbackProbe] = (await client.probes.listByProject({ project: "shop" })).data
    .filter((p) => p.url.startsWith(loopback));
  await client.probes.run({ project: "shop", probeId: loopbackProbe.probe_id });
  return { key: created.data.secret!, locationToken: office.data.token };
}

/** What the API shows of an instance's configuration, without ids and times of writing. */
async function configurationOf(client: ProbeClient) {
  const projects = (await client.projects.list()).data;
  const perProject = [];
  for (const { project } of projects) {
    perProject.push({
      project,
      alerts: (await client.alerts.getProject({ project })).data,
      page: { ...(await client.statusPages.get({ project })).data, updated_at: undefined },
      windows: (await client.maintenance.list({ project })).data.map((w) => ({
        ...w,
        id: undefined,
        created_at: undefined,
      })),
    });
  }
  return {
    projects,
    locations: (await client.locations.list()).data.map((l) => ({
      name: l.name,
      kind: l.kind,
      label: l.label,
      probes: l.probes,
    })),
    probes: (await client.probes.list()).data.map((p) => ({
      ...p,
      state: undefined,
      state_since: undefined,
      location_states: undefined,
    })),
    targets: (await client.targets.list()).data.map((t) => ({
      ...t,
      created_at: undefined,
      updated_at: undefined,
    })),
    alerts: (await client.alerts.get()).data,
    iamAlive: (await client.settings.getIamAlive()).data,
    perProject,
  };
}

for (const backend of backends()) {
  Deno.test(`export, then seed a fresh instance: the same configuration [${backend}]`, async (t) => {
    const source = await startTestApp(backend);
    const copy = await startTestApp(backend);
    const loopback = await startTarget();
    try {
      const a = clientOf(source);
      const b = clientOf(copy);
      const { key: generatedKey, locationToken } = await configure(a, loopback.origin);
      const badgeTokens = JSON.stringify(await a.badges.list({ project: "shop" }));

      const first = ok(await cli(source, ["export"]));
      const text = first.stdout;
      const cart = (await a.probes.list()).data.find((p) => p.url.endsWith("/api/cart"))!;
      const blog = (await a.probes.listByProject({ project: "blog" })).data[0];
      const cartVar = (header: string) =>
        `PROBE_HEADER_SHOP_${cart.probe_id.toUpperCase()}_${header}`;
      const blogCookie = `PROBE_HEADER_BLOG_${blog.probe_id.toUpperCase()}_COOKIE`;

      await t.step("the file says how to load it and names a variable for each secret", () => {
        assert.match(text, /^# .*written by `deno task cli export`/);
        assert.match(text, /^# {3}deno task seed --prune <this file>$/m);
        const variables = [
          "PROBE_TARGET_OPS_HOOK_SECRET",
          "PROBE_TARGET_SIGNED_HOOK_SECRET",
          "PROBE_TARGET_TEAM_DISCORD_URL",
          "PROBE_TARGET_TEAM_SLACK_URL",
          cartVar("AUTHORIZATION"),
          cartVar("X_API_KEY"),
          blogCookie,
        ];
        for (const name of variables) {
          assert.match(text, new RegExp(`^# {3}${name}$`, "m"), name);
          assert.match(first.stderr, new RegExp(`^${name} +the `, "m"), name);
        }
        const seed = parseYaml(text);
        assert.deepEqual(seed.targets.map((t: { name: string }) => t.name), [
          "oncall",
          "ops-hook",
          "signed.hook",
          "team-discord",
          "team-slack",
        ]);
        assert.deepEqual(seed.projects.map((p: { project: string }) => p.project), [
          "api.v2",
          "blog",
          "shop",
        ]);
        const shop = seed.projects[2];
        // By URL: the loopback probe (http:) first, then the cart and the health check.
        assert.deepEqual(shop.probes[1].url, "https://shop.example.com/api/cart");
        assert.deepEqual(shop.probes[1].headers, { "content-type": "application/json" });
        // A probe's own schedule travels; the service-wide default is left out.
        assert.deepEqual(
          [shop.probes[2].url, shop.probes[2].interval_seconds, shop.probes[2].timeout_ms],
          ["https://shop.example.com/health", 300, 5_000],
        );
        assert.ok(!("interval_seconds" in shop.probes[1]) && !("timeout_ms" in shop.probes[1]));
        assert.deepEqual(shop.probes[1].headers_env, {
          Authorization: cartVar("AUTHORIZATION"),
          "X-Api-Key": cartVar("X_API_KEY"),
        });
        assert.deepEqual(shop.alerts, {
          targets: ["oncall", "signed.hook"],
          failure_threshold: 1,
          notify_recovered: false,
          escalation: [{ after_minutes: 5, targets: ["team-slack"] }, {
            after_minutes: 30,
            targets: ["oncall", "log"],
          }],
        });
        assert.deepEqual(shop.maintenance[0], {
          starts_at: "2024-03-01T08:00:00.000Z",
          ends_at: "2024-03-01T10:00:00.000Z",
          reason: "Database upgrade",
        });
        assert.deepEqual(seed.locations, [{ name: "eu-1" }, {
          name: "office",
          label: "Office LAN",
        }]);
        assert.deepEqual(seed.projects[0].default_locations, ["local", "office"]);
        assert.ok(!("locations" in seed.projects[0].probes[0]), "follows its project");
        assert.deepEqual(shop.probes[2].locations, ["eu-1", "local"]);
        assert.ok(!("default_locations" in shop));
        assert.deepEqual(seed.settings, {
          iam_alive: { enabled: true, interval_hours: 6, channels: ["log"] },
        });
      });

      await t.step("no secret, result, state or badge token is in it", () => {
        for (
          const secret of [
            generatedKey,
            OWN_KEY,
            SLACK_CREDENTIAL,
            DISCORD_CREDENTIAL,
            BEARER,
            API_KEY_HEADER,
            COOKIE,
            locationToken,
            "plt_",
          ]
        ) {
          assert.ok(!text.includes(secret), `the export holds ${secret}`);
          assert.ok(!first.stderr.includes(secret), `stderr holds ${secret}`);
        }
        assert.match(badgeTokens, /"id"/, "the badge exists");
        for (const word of ["token", "badge", "outcome", "state", "started_at", "probe_id"]) {
          assert.ok(!text.includes(word), `the export mentions ${word}`);
        }
        assert.ok(!text.includes("whsec_"), "not even a masked key");
        assert.ok(!text.includes("created_at") && !text.includes("updated_at"));
      });

      await t.step("seeded into a fresh instance, it exports the same text", async () => {
        const env = {
          PROBE_TARGET_OPS_HOOK_SECRET: generatedKey,
          PROBE_TARGET_SIGNED_HOOK_SECRET: OWN_KEY,
          PROBE_TARGET_TEAM_SLACK_URL: SLACK_URL,
          PROBE_TARGET_TEAM_DISCORD_URL: DISCORD_URL,
          [cartVar("AUTHORIZATION")]: BEARER,
          [cartVar("X_API_KEY")]: API_KEY_HEADER,
          [blogCookie]: COOKIE,
        };
        const files = new Map([["config.yaml", text]]);
        const seeded = ok(await cli(copy, ["import", "config.yaml", "--prune"], { env, files }));
        assert.doesNotMatch(seeded.stdout, /Note:/, "enabled is in the file: no surprise");
        // The locations it made got new tokens, printed once; the source's is not among them.
        const tokens = [
          ...seeded.stdout.matchAll(/^Token of location (\S+), shown this once.*\n(plt_\S+)$/gm),
        ];
        assert.deepEqual(tokens.map((m) => m[1]), ["eu-1", "office"], seeded.stdout);
        assert.ok(!seeded.stdout.includes(locationToken));
        assert.deepEqual(await configurationOf(b), await configurationOf(a));
        const again = ok(await cli(copy, ["export"]));
        assert.equal(again.stdout, text);
        assert.equal(again.stderr, first.stderr);

        const twice = ok(
          await cli(copy, ["--json", "import", "config.yaml", "--prune"], { env, files }),
        );
        const meta = JSON.parse(twice.stdout).meta;
        assert.equal(meta.unchanged, JSON.parse(twice.stdout).data.length, twice.stdout);
        assert.ok(!twice.stdout.includes("plt_"), "no token for a location that was there");
      });

      await t.step("an unset variable stops the import before any change", async () => {
        const fresh = await startTestApp(backend);
        try {
          const files = new Map([["config.yaml", text]]);
          const run = await cli(fresh, ["import", "config.yaml"], {
            env: { PROBE_TARGET_TEAM_SLACK_URL: SLACK_URL },
            files,
          });
          assert.equal(run.code, EXIT.usage);
          assert.match(
            run.stderr,
            new RegExp(
              `projects\\.2\\.probes\\.1\\.headers_env\\.Authorization: the environment variable ${
                cartVar("AUTHORIZATION")
              } is not set`,
            ),
          );
          assert.equal((await clientOf(fresh).projects.list()).meta.count, 0);
        } finally {
          await fresh.close();
        }
      });

      await t.step("--format json, --output and --header-values", async () => {
        const json = ok(await cli(source, ["export", "--format", "json"]));
        const { $comment, ...content } = JSON.parse(json.stdout);
        assert.match($comment, /deno task seed --prune/);
        assert.deepEqual(content, parseYaml(text));
        assert.deepEqual(parseSeedFile(json.stdout, "config.json").projects.length, 3);
        assert.equal(ok(await cli(source, ["--json", "export"])).stdout, json.stdout);

        const files = new Map<string, string>();
        const written = ok(await cli(source, ["export", "--output", "out.yaml"], { files }));
        assert.equal(written.stdout, "");
        assert.equal(files.get("out.yaml"), text);
        assert.match(
          written.stderr,
          /^Wrote out\.yaml: 3 projects, 5 probes, 0 heartbeats, 3 maintenance.* 2 remote locations/m,
        );

        const inline = ok(await cli(source, ["export", "--header-values"])).stdout;
        assert.ok(inline.includes(BEARER) && inline.includes(COOKIE));
        assert.ok(!inline.includes("headers_env") && !inline.includes(SLACK_CREDENTIAL));
      });

      await t.step(
        "--prune deletes windows the file does not list; status pages follow",
        async () => {
          const [window] = (await b.maintenance.list({ project: "shop" })).data;
          await b.maintenance.create({
            project: "shop",
            starts_at: "2031-01-01T00:00:00Z",
            ends_at: "2031-01-02T00:00:00Z",
          });
          await b.statusPages.update({ project: "shop", public: false });
          const env = { PROBE_TARGET_TEAM_SLACK_URL: SLACK_URL };
          const file = (maintenance: unknown) =>
            new Map([[
              "shop.json",
              JSON.stringify({
                projects: [{
                  project: "shop",
                  status_page: { public: true },
                  maintenance,
                  probes: [],
                }],
              }),
            ]]);
          const keep = ok(
            await cli(copy, ["--json", "import", "shop.json"], {
              env,
              files: file([{ starts_at: window.starts_at, ends_at: window.ends_at, reason: "x" }]),
            }),
          );
          const steps = JSON.parse(keep.stdout).data;
          assert.deepEqual(
            steps.filter((s: { kind: string }) => s.kind !== "probe").map((
              s: { kind: string; action: string },
            ) => `${s.kind} ${s.action}`),
            ["project unchanged", "maintenance created", "status_page updated"],
          );
          assert.equal((await b.statusPages.get({ project: "shop" })).data.public, true);
          assert.equal((await b.maintenance.list({ project: "shop" })).meta.count, 4);

          const pruned = ok(
            await cli(copy, ["--json", "import", "shop.json", "--prune"], {
              env,
              files: file([{
                starts_at: window.starts_at,
                ends_at: window.ends_at,
                reason: window.reason,
              }]),
            }),
          );
          const deleted = JSON.parse(pruned.stdout).data.filter((
            s: { kind: string; action: string },
          ) => s.action === "deleted" && s.kind === "maintenance");
          assert.equal(deleted.length, 3);
          const left = (await b.maintenance.list({ project: "shop" })).data;
          assert.deepEqual(left.map((w) => [w.starts_at, w.reason]), [[
            window.starts_at,
            "Database upgrade",
          ]]);
        },
      );
    } finally {
      await loopback.close();
      await copy.close();
      await source.close();
    }
  });
}

Deno.test("a seed file's headers_env, maintenance and status_page are checked", () => {
  const text = JSON.stringify({
    projects: [{
      project: "a",
      status_page: { public: "yes", theme: "dark" },
      maintenance: [
        { starts_at: "2030-01-01T00:00:00Z", ends_at: "2029-01-01T00:00:00Z" },
        { starts_at: "2030-01-01T00:00:00", ends_at: "2030-01-02T00:00:00Z" },
      ],
      probes: [{
        url: "https://x.example/",
        headers: { authorization: "Basic x" },
        headers_env: { Authorization: "AUTH", "Transfer-Encoding": "TE", "X-Token": "not a name" },
      }],
    }, {
      project: "b",
      maintenance: [
        { starts_at: "2030-01-01T00:00:00Z", ends_at: "2030-01-02T00:00:00Z" },
        { starts_at: "2030-01-01T01:00:00+01:00", ends_at: "2030-01-02T00:00:00Z" },
      ],
    }],
  });
  assert.throws(() => parseSeedFile(text, "bad.json"), (error: Error) => {
    assert.ok(error instanceof SeedFileError);
    const m = error.message;
    assert.match(m, /^ {2}projects\.0\.status_page\.public: /m);
    assert.match(m, /^ {2}projects\.0\.status_page: Unrecognized key: "theme"$/m);
    assert.match(m, /^ {2}projects\.0\.maintenance\.0\.ends_at: must be after starts_at$/m);
    assert.match(m, /^ {2}projects\.0\.maintenance\.1\.starts_at: /m);
    assert.match(m, /^ {2}projects\.1\.maintenance\.1: listed twice$/m);
    assert.doesNotMatch(m, /differ ignoring case/, "said once, by the seed's own words");
    assert.match(
      m,
      /^ {2}projects\.0\.probes\.0\.headers_env\.Authorization: is in headers too/m,
    );
    assert.match(
      m,
      /^ {2}projects\.0\.probes\.0\.headers_env\.Transfer-Encoding: connection and framing/m,
    );
    assert.match(
      m,
      /^ {2}projects\.0\.probes\.0\.headers_env\.X-Token: must be the name of an environment/m,
    );
    return true;
  });
});

Deno.test("a seed file's header names are capped as the API caps them, in headers_env too", () => {
  const seed = (name: string) =>
    JSON.stringify({
      projects: [{
        project: "a",
        probes: [
          { url: "https://x.example/", headers: { [name]: "v" } },
          { url: "https://y.example/", headers_env: { [name]: "TOKEN" } },
        ],
      }],
    });
  assert.doesNotThrow(() => parseSeedFile(seed("X".repeat(128)), "ok.json"));
  assert.throws(() => parseSeedFile(seed("X".repeat(129)), "long.json"), (error: Error) => {
    assert.ok(error instanceof SeedFileError);
    const said = "header names must be HTTP tokens \\(RFC 9110\\) of at most 128 characters";
    assert.match(
      error.message,
      new RegExp(`^ {2}projects\\.0\\.probes\\.0\\.headers\\.X+: ${said}`, "m"),
    );
    assert.match(
      error.message,
      new RegExp(`^ {2}projects\\.0\\.probes\\.1\\.headers_env\\.X+: ${said}`, "m"),
    );
    return true;
  });
});

Deno.test("a JSON seed file that repeats a key is refused, naming it, as YAML ones are", () => {
  const text = '{"projects":[{"project":"a","probes":[{"url":"https://x.example/",' +
    '"headers":{"X-A":"1","X-A":"2"}}]}]}';
  assert.throws(() => parseSeedFile(text, "twice.json"), (error: Error) => {
    assert.ok(error instanceof SeedFileError);
    assert.match(
      error.message,
      /^ {2}projects\.0\.probes\.0\.headers\.X-A: the key "X-A" appears more than once/m,
    );
    return true;
  });
  const yaml = "projects:\n  - project: a\n    project: b\n";
  assert.throws(() => parseSeedFile(yaml, "twice.yaml"), SeedFileError);
});
