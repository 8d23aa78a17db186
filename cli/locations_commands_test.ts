/**
 * `locations list|show|add|update|rotate|delete`, `--locations` on probes and
 * `--default-locations` on projects, and `--location` on results list, stats and series: the CLI
 * in-process against a real app, on PGlite and, with TEST_DATABASE_URL, on PostgreSQL. A remote
 * location's runs are posted through the runner protocol with its token.
 */
import assert from "node:assert/strict";
import { apiSuite, BASE, uniqueName } from "../server/testing/app.ts";
import { runRemotely } from "../server/testing/remote_runs.ts";
import { runDueProbesOnce } from "../server/testing/runs.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { EXIT } from "./exit_codes.ts";
import { ago } from "./commands/locations.ts";
import { expectExit, runCliOn } from "./testing.ts";

apiSuite("cli: locations", (test) => {
  test("add prints the token once; list, show, update, rotate and delete", async ({ app }) => {
    const cli = (...args: string[]) => runCliOn(app, args);
    const name = uniqueName("loc");
    const added = expectExit(await cli("locations", "add", name, "--label", "Office"), EXIT.ok);
    const token = added.stdout.match(/\b(plt_[A-Za-z0-9_-]+)/)?.[1];
    assert.ok(token, added.stdout);
    assert.match(added.stdout, /shown this once/);
    // The whole start command: this service's address, the token and the networks' setting.
    assert.ok(
      added.stdout.includes(
        `  SERVICE_URL=${BASE} LOCATION_TOKEN=${token} PROBE_ALLOW_NETWORKS= \\\n` +
          "    deno task runner:remote\n",
      ),
      added.stdout,
    );

    const listed = expectExit(await cli("locations", "list"), EXIT.ok).stdout;
    const [head, first, ...rest] = listed.trimEnd().split("\n");
    assert.match(
      head,
      /^NAME\s+KIND\s+LABEL\s+PROBES\s+RUNNERS\s+LAST_SEEN\s+VERSION\s+CHECKS\/MIN\s+LAG_S$/,
    );
    assert.match(first, /^local\s+local\s+-\s+\d+/);
    assert.ok(
      rest.some((l) => new RegExp(`^${name}\\s+remote\\s+Office\\s+0\\s+0\\s+-\\s+-\\s+0`).test(l)),
      listed,
    );
    assert.ok(!listed.includes(token), "a list never shows a token");

    const shown = expectExit(await cli("--json", "locations", "show", name), EXIT.ok).json();
    assert.equal(shown.data.label, "Office");
    assert.equal(shown.data.token, undefined);
    expectExit(await cli("locations", "update", name, "--no-label"), EXIT.ok);
    assert.equal(
      expectExit(await cli("--json", "locations", "show", name), EXIT.ok).json().data.label,
      null,
    );

    const rotated = expectExit(await cli("--json", "locations", "rotate", name), EXIT.ok).json();
    assert.match(rotated.data.token, /^plt_/);
    assert.notEqual(rotated.data.token, token);
    // The old token no longer claims; the new one does.
    await assert.rejects(() => runRemotely(app.handler, token), /answered 401/);
    assert.equal(await runRemotely(app.handler, rotated.data.token), 0);

    const builtIn = await cli("locations", "rotate", "local");
    assert.notEqual(builtIn.code, EXIT.ok);
    assert.match(builtIn.stderr, /built-in location/);
    const missing = await cli("locations", "show", "nowhere");
    assert.equal(missing.code, EXIT.notFound);

    const deleted = expectExit(await cli("locations", "delete", name), EXIT.ok);
    assert.match(deleted.stdout, new RegExp(`Deleted location ${name}`));
    assert.equal((await cli("locations", "show", name)).code, EXIT.notFound);
  });

  test("probes' --locations, projects' --default-locations, results' --location", async ({ app }) => {
    const target = await startTarget();
    try {
      const cli = (...args: string[]) => runCliOn(app, args);
      const name = uniqueName("loc");
      const token = expectExit(await cli("--json", "locations", "add", name), EXIT.ok).json()
        .data.token;
      const project = uniqueName();
      expectExit(
        await cli("projects", "create", project, "--default-locations", `local,${name}`),
        EXIT.ok,
      );
      const proj = expectExit(await cli("--json", "projects", "get", project), EXIT.ok).json();
      assert.deepEqual(proj.data.default_locations, ["local", name]);

      const created = expectExit(
        await cli(
          "--json",
          "probes",
          "create",
          project,
          `${target.origin}/ok?cli`,
          "--locations",
          `local, ${name}`,
        ),
        EXIT.ok,
      ).json();
      const probeId = created.data.probe_id;
      const got = expectExit(await cli("--json", "probes", "get", project, probeId), EXIT.ok)
        .json();
      assert.deepEqual(got.data.locations, ["local", name]);

      const unknown = await cli("probes", "update", project, probeId, "--locations", "local,mars");
      assert.equal(unknown.code, EXIT.invalid);
      assert.match(unknown.stderr, /locations\.1: no location is named "mars"/);

      await runDueProbesOnce(app.database.db);
      assert.equal(await runRemotely(app.handler, token, { outcome: "down" }), 1);

      const all = expectExit(await cli("results", "list", project, probeId), EXIT.ok).stdout;
      assert.equal(all.trimEnd().split("\n").length, 3, all);
      const away = expectExit(
        await cli("results", "list", project, probeId, "--location", name),
        EXIT.ok,
      ).stdout.trimEnd().split("\n");
      assert.equal(away.length, 2, away.join("\n"));
      assert.match(away[1], new RegExp(`^\\S+\\s+${name}\\s+down\\s`));
      const stats = expectExit(
        await cli("--json", "results", "stats", project, probeId, "--location", "local"),
        EXIT.ok,
      ).json();
      assert.deepEqual([stats.data.runs, stats.data.up, stats.data.down], [1, 1, 0]);
      const series = expectExit(
        await cli("--json", "results", "series", project, probeId, "--location", name),
        EXIT.ok,
      ).json();
      assert.equal(
        series.data.buckets.reduce((n: number, b: { down: number }) => n + b.down, 0),
        1,
      );
      const bad = await cli("results", "stats", project, probeId, "--location", "-x");
      assert.equal(bad.code, EXIT.invalid);

      // --no-locations: back to the project's default; the default cleared: the built-in one.
      expectExit(await cli("probes", "update", project, probeId, "--no-locations"), EXIT.ok);
      expectExit(await cli("projects", "update", project, "--no-default-locations"), EXIT.ok);
      const back = expectExit(await cli("--json", "probes", "get", project, probeId), EXIT.ok)
        .json();
      assert.equal(back.data.locations, null);
      assert.deepEqual(back.data.effective_locations, ["local"]);
    } finally {
      await target.close();
    }
  });

  test("alerts set --location-quorum takes a number or majority", async ({ app }) => {
    const cli = (...args: string[]) => runCliOn(app, args);
    const quorum = expectExit(
      await cli("--json", "alerts", "set", "--location-quorum", "2"),
      EXIT.ok,
    );
    assert.equal(quorum.json().data.location_quorum, 2);
    const majority = expectExit(
      await cli("--json", "alerts", "set", "--location-quorum", "majority"),
      EXIT.ok,
    );
    assert.equal(majority.json().data.location_quorum, "majority");
  });
});

Deno.test("ago: how long ago, for people", () => {
  const now = Date.parse("2026-01-02T00:00:00Z");
  assert.equal(ago(null, now), "-");
  assert.equal(ago("2026-01-01T23:59:50Z", now), "10s ago");
  assert.equal(ago("2026-01-01T23:50:00Z", now), "10m ago");
  assert.equal(ago("2026-01-01T21:00:00Z", now), "3h ago");
  assert.equal(ago("2025-12-29T00:00:00Z", now), "4d ago");
});
