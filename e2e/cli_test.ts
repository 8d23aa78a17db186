// The CLI as operators run it: `deno run cli/main.ts …` as a subprocess against a live server.
// Results, stats and the status board: cli_results_test.ts.
import assert from "node:assert/strict";
import { backends, uniqueName } from "../server/testing/app.ts";
import { type LiveServer, startLiveServer } from "../server/testing/live.ts";
import { EXIT } from "../cli/exit_codes.ts";
import { cli, expect } from "./testdata/cli_run.ts";

for (const backend of backends()) {
  Deno.test(`deno task cli against a live server [${backend}]`, async (t) => {
    const server: LiveServer = await startLiveServer(backend);
    const emptyDir = await Deno.makeTempDir({ prefix: "cli-test-" });
    const env = {
      PROBE_SERVICE_URL: server.url,
      SERVICE_API_KEY: server.apiKey,
      DATA_DIR: emptyDir,
    };
    const run = (args: string[], stdin?: string) => cli(args, env, stdin);
    try {
      await t.step("projects: create, list, get, update, delete", async () => {
        const project = uniqueName("cli");
        const created = expect(await run(["projects", "create", project, "--label", "Shop"]), 0);
        assert.match(created.stdout, new RegExp(`Created project ${project}`));

        const table = expect(await run(["projects", "list", "--project", project]), 0);
        const [head, row] = table.stdout.trim().split("\n");
        assert.match(head, /^PROJECT\s+STATUS\s+LABEL\s+DESCRIPTION$/);
        assert.match(row, new RegExp(`^${project}\\s+enabled\\s+Shop\\s+-$`));

        const listed = expect(await run(["--json", "projects", "list", "--project", project]), 0);
        assert.deepEqual(listed.json(), {
          data: [{
            project,
            label: "Shop",
            description: null,
            status: "enabled",
            default_locations: null,
          }],
          meta: { count: 1, next_after: null },
        });

        expect(
          await run([
            "projects",
            "update",
            project,
            "--no-label",
            "--description",
            "D",
            "--status",
            "disabled",
          ]),
          0,
        );
        const got = expect(await run(["projects", "get", project, "--json"]), 0);
        assert.deepEqual(got.json().data, {
          project,
          label: null,
          description: "D",
          status: "disabled",
          default_locations: null,
        });

        const deleted = expect(await run(["--json", "projects", "delete", project]), 0);
        assert.deepEqual(deleted.json().data, { project, deleted: true, archived: true });
        expect(await run(["projects", "get", project]), EXIT.notFound);
      });

      await t.step("probes: create, list, get, update, delete", async () => {
        const project = uniqueName("cli");
        expect(await run(["projects", "create", project]), 0);
        const created = expect(
          await run([
            "--json",
            "probes",
            "create",
            project,
            "http://127.0.0.1:9/health",
            "--method",
            "head",
            "--header",
            "accept: text/plain",
            "--latency",
            "700",
          ]),
          0,
        ).json();
        assert.equal(created.meta.created, true);

        // The same URL again rewrites the probe; as a GET now, its id changes with the method.
        const again = expect(
          await run(["probes", "create", project, "http://127.0.0.1:9/health"]),
          0,
        );
        assert.match(again.stdout, /^Rewrote probe /);
        const probeId = again.stdout.split(" ")[2];
        assert.notEqual(probeId, created.data.probe_id);

        const table = expect(await run(["probes", "list", "--project", project]), 0);
        assert.match(
          table.stdout,
          /^PROJECT\s+PROBE_ID\s+METHOD\s+URL\s+LATENCY_MS\s+INTERVAL_S\s+TIMEOUT_MS\n/,
        );
        assert.match(table.stdout, /GET\s+http:\/\/127\.0\.0\.1:9\/health/);

        const got = expect(await run(["--json", "probes", "get", project, probeId]), 0).json();
        assert.equal(got.data.url, "http://127.0.0.1:9/health");

        const updated = expect(
          await run([
            "--json",
            "probes",
            "update",
            project,
            probeId,
            "--method",
            "POST",
            "--body",
            '{"ping":true}',
          ]),
          0,
        ).json();
        const newId = updated.data.probe_id;
        assert.notEqual(newId, probeId);
        const after = expect(await run(["--json", "probes", "get", project, newId]), 0).json();
        assert.equal(after.data.method, "POST");
        assert.deepEqual(after.data.body, { ping: true });

        expect(await run(["probes", "delete", project, newId]), 0);
        expect(await run(["probes", "get", project, newId]), EXIT.notFound);
      });

      await t.step("settings: get and set", async () => {
        const set = expect(
          await run([
            "--json",
            "settings",
            "set",
            "--interval-hours",
            "4",
            "--channels",
            "log,webhook",
          ]),
          0,
        ).json();
        assert.deepEqual(set.data, {
          enabled: true,
          interval_hours: 4,
          channels: ["log", "webhook"],
        });
        expect(await run(["settings", "set", "--disable"]), 0);
        const got = expect(await run(["settings", "get"]), 0);
        assert.match(got.stdout, /^enabled\s+false$/m);
        assert.match(got.stdout, /^interval_hours\s+4$/m);

        expect(await run(["settings", "set", "--channels", "log"]), 0);
        const sent = expect(await run(["settings", "test"]), 0);
        assert.match(sent.stdout, /^Sent report #\d+\.\nCHANNEL\s+OUTCOME/);
        assert.match(sent.stdout, /^log\s+delivered\s+1\s+-$/m);
        const deliveries = expect(
          await run(["--json", "settings", "deliveries", "--limit", "1"]),
          0,
        );
        assert.equal(deliveries.json().data[0].channel, "log");
      });

      await t.step("exit statuses say what failed", async () => {
        const project = uniqueName("cli");
        expect(await run(["projects", "create", project]), 0);
        const conflict = expect(await run(["projects", "create", project]), EXIT.conflict);
        assert.match(conflict.stderr, /conflict, HTTP 409/);

        const invalid = expect(
          await run(["probes", "create", project, "ftp://nowhere"]),
          EXIT.invalid,
        );
        assert.match(invalid.stderr, /^ {2}url: /m);
        expect(await run(["settings", "set"]), EXIT.invalid);

        const jsonError = expect(
          await run(["--json", "projects", "get", uniqueName()]),
          EXIT.notFound,
        );
        assert.equal(JSON.parse(jsonError.stderr).error.code, "not_found");

        expect(
          await cli(["projects", "list"], { ...env, SERVICE_API_KEY: "wrong-key-1" }),
          EXIT.unauthorized,
        );
        const noKey = expect(
          await cli(["projects", "list"], { ...env, SERVICE_API_KEY: "" }),
          EXIT.unauthorized,
        );
        assert.match(noKey.stderr, /No API key/);

        const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
        const closedPort = (listener.addr as Deno.NetAddr).port;
        listener.close();
        expect(
          await run(["--url", `http://127.0.0.1:${closedPort}`, "projects", "list"]),
          EXIT.unreachable,
        );

        expect(await run(["projects", "frobnicate"]), EXIT.usage);
        expect(
          await run(["probes", "create", project, "http://127.0.0.1:9/", "--latency", "soon"]),
          EXIT.usage,
        );
        expect(await run(["--url", "not-a-url", "projects", "list"]), EXIT.usage);
      });

      await t.step(
        "without a key given, the key the service wrote in DATA_DIR is used",
        async () => {
          const dataDir = await Deno.makeTempDir({ prefix: "cli-data-" });
          try {
            await Deno.writeTextFile(`${dataDir}/api-key`, `${server.apiKey}\n`);
            expect(
              await cli(["settings", "get"], { ...env, SERVICE_API_KEY: "", DATA_DIR: dataDir }),
              0,
            );
          } finally {
            await Deno.remove(dataDir, { recursive: true });
          }
        },
      );

      await t.step("import loads a YAML file, and a second run changes nothing", async () => {
        const project = uniqueName("seed");
        const yaml = `projects:
  - project: ${project}
    label: Seeded
    probes:
      - url: http://127.0.0.1:9/a
        latency: 100
      - url: http://127.0.0.1:9/b
        method: post
        body: { x: 1 }
`;
        const file = await Deno.makeTempFile({ suffix: ".yaml" });
        try {
          await Deno.writeTextFile(file, yaml);
          const first = expect(await run(["--json", "import", file]), 0).json();
          assert.deepEqual(first.meta, {
            created: 3,
            updated: 0,
            rewritten: 0,
            deleted: 0,
            unchanged: 0,
            dry_run: false,
          });
          const second = expect(await run(["import", file]), 0);
          assert.match(
            second.stdout,
            /0 created, 0 updated, 0 rewritten, 0 deleted, 3 unchanged\./,
          );
          const probes = expect(await run(["--json", "probes", "list", "--project", project]), 0);
          assert.equal(probes.json().meta.count, 2);
        } finally {
          await Deno.remove(file);
        }
      });

      await t.step(
        "import reads JSON from stdin, and refuses an invalid file with exit 2",
        async () => {
          const project = uniqueName("seed");
          const body = JSON.stringify({ projects: [{ project, probes: [] }] });
          const stdin = expect(await run(["--json", "import", "-"], body), 0).json();
          assert.equal(stdin.meta.created, 1);
          const bad = expect(
            await run(["import", "-"], JSON.stringify({ projects: [{ project: "" }], extra: 1 })),
            EXIT.usage,
          );
          assert.match(bad.stderr, /not a valid seed file/);
          assert.match(bad.stderr, /projects\.0\.project/);
          expect(await run(["import", `${emptyDir}/missing.yaml`]), EXIT.usage);
        },
      );

      await t.step("export, imported into a fresh server, exports the same text", async () => {
        const chat = uniqueName("e2e-slack");
        const variable = `PROBE_TARGET_${chat.toUpperCase().replaceAll("-", "_")}_URL`;
        const slackUrl = "https://hooks.slack.com/services/T0/B0/e2e-export-credential";
        expect(
          await cli(["targets", "create", chat, "slack", "--url-env", "CHAT_URL"], {
            ...env,
            CHAT_URL: slackUrl,
          }),
          0,
        );
        const file = `${emptyDir}/export.yaml`;
        const written = expect(await run(["export", "--output", file]), 0);
        assert.equal(written.stdout, "");
        assert.match(written.stderr, new RegExp(`^${variable} +the URL of slack target`, "m"));
        const text = await Deno.readTextFile(file);
        assert.equal(expect(await run(["export"]), 0).stdout, text);
        assert.ok(!text.includes("e2e-export-credential"));

        const fresh = await startLiveServer(backend);
        try {
          const there = { ...env, PROBE_SERVICE_URL: fresh.url, SERVICE_API_KEY: fresh.apiKey };
          expect(
            await cli(["import", "-", "--prune"], { ...there, [variable]: slackUrl }, text),
            0,
          );
          assert.equal(expect(await cli(["export"], there), 0).stdout, text);
        } finally {
          await fresh.close();
        }
      });
    } finally {
      await server.close();
      await Deno.remove(emptyDir, { recursive: true });
    }
  });
}
