/**
 * The CLI's `locations` commands and `--location` filters, in-process against a real app, on
 * PGlite and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { apiSuite, type TestContext, uniqueName } from "../server/testing/app.ts";
import { EXIT } from "./exit_codes.ts";
import { type CliOptions, expectExit, runCliOn } from "./testing.ts";

const cli = ({ app }: TestContext, args: string[], options: CliOptions = {}) =>
  runCliOn(app, args, options);

Deno.test("locations --help works on every level", async () => {
  for (
    const level of [
      ["locations"],
      ...["list", "add", "rotate", "delete"].map((v) => ["locations", v]),
    ]
  ) {
    const { stdout } = expectExit(await runCliOn(null, [...level, "--help"]), EXIT.ok);
    assert.match(stdout, new RegExp(`^Usage: deno task cli ${level.join(" ")}`));
  }
});

apiSuite("CLI: locations", (test) => {
  test("add prints the token once and how to start a runner; list, rotate, delete", async (t) => {
    const name = uniqueName("loc");
    const added = expectExit(
      await cli(t, ["locations", "add", name, "--label", "Office"]),
      EXIT.ok,
    );
    const token = /plt_[A-Za-z0-9_-]+/.exec(added.stdout)?.[0];
    assert.ok(token, added.stdout);
    assert.match(added.stdout, /LOCATION_TOKEN=plt_.* deno task runner:remote/);
    const listed = expectExit(await cli(t, ["locations", "list"]), EXIT.ok).stdout;
    assert.match(listed, /^NAME\s+KIND/m);
    assert.match(listed, new RegExp(`^${name}\\s+remote\\s+Office`, "m"));
    assert.ok(!listed.includes(token), "a list never shows a token");
    const rotated = expectExit(await cli(t, ["--json", "locations", "rotate", name]), EXIT.ok);
    assert.notEqual(rotated.json().data.token, token);

    const project = uniqueName();
    expectExit(await cli(t, ["projects", "create", project]), EXIT.ok);
    const probe = expectExit(
      await cli(t, [
        "--json",
        "probes",
        "create",
        project,
        "https://example.com/",
        "--locations",
        `local,${name}`,
      ]),
      EXIT.ok,
    ).json().data;
    const results = expectExit(
      await cli(t, ["--json", "results", "list", project, probe.probe_id, "--location", name]),
      EXIT.ok,
    );
    assert.ok(
      results.calls.some((c) => c.includes("location")) ||
        results.urls.some((u) => u.includes(`location`)),
    );
    assert.deepEqual(results.json().data, []);
    const refused = await cli(t, ["locations", "delete", name]);
    assert.notEqual(refused.code, EXIT.ok);
    expectExit(
      await cli(t, ["probes", "update", project, probe.probe_id, "--no-locations"]),
      EXIT.ok,
    );
    expectExit(await cli(t, ["locations", "delete", name]), EXIT.ok);
    const quorum = expectExit(
      await cli(t, ["--json", "alerts", "set", "--location-quorum", "2"]),
      EXIT.ok,
    );
    assert.equal(quorum.json().data.location_quorum, 2);
    expectExit(await cli(t, ["alerts", "set", "--location-quorum", "majority"]), EXIT.ok);
  });

  test("export lists remote locations without tokens; a seed makes them and keeps probes' locations", async (t) => {
    const name = uniqueName("loc");
    const project = uniqueName();
    const seed = [
      "locations:",
      `  - { name: ${name}, label: Office }`,
      "projects:",
      `  - project: ${project}`,
      `    default_locations: [${name}]`,
      "    probes:",
      "      - { url: https://example.com/a }",
      `      - { url: https://example.com/b, locations: [local, ${name}] }`,
    ].join("\n");
    const files = { "seed.yaml": seed };
    const first = expectExit(await cli(t, ["import", "seed.yaml"], { files }), EXIT.ok);
    assert.match(
      first.stdout,
      new RegExp(`location ${name} was made: its token, shown this once, is plt_`),
    );
    const again = expectExit(await cli(t, ["--json", "import", "seed.yaml"], { files }), EXIT.ok);
    assert.equal(again.json().meta.unchanged, again.json().data.length, again.stdout);
    const probes =
      expectExit(await cli(t, ["--json", "probes", "list", "--project", project]), EXIT.ok)
        .json().data;
    assert.deepEqual(
      probes.map((p: { effective_locations: string[] }) => p.effective_locations),
      [[name], ["local", name]],
    );
    const exported = expectExit(await cli(t, ["export"]), EXIT.ok).stdout;
    assert.match(exported, new RegExp(`- name: ${name}\\n\\s+label: Office`));
    assert.match(exported, new RegExp(`default_locations:\\n\\s+- ${name}`));
    assert.ok(!exported.includes("plt_"), "no token in an export");
  });
});
