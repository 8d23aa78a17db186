/**
 * Seed files with locations: remote locations created (a new token printed once) or relabelled,
 * never deleted; projects' `default_locations` and probes' `locations` loaded and compared; the
 * built-in location refused in `locations`; an unknown location a 422 naming the entry. In-process
 * against a real app, on PGlite and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { apiSuite, uniqueName } from "../server/testing/app.ts";
import { EXIT } from "./exit_codes.ts";
import { expectExit, runCliOn } from "./testing.ts";

apiSuite("seed files: locations", (test) => {
  test("created with a token printed once, relabelled, and named by probes", async ({ app, api }) => {
    const office = uniqueName("office");
    const project = uniqueName();
    const file = (label: string, probeLocations: string) => `
locations:
  - { name: ${office}, label: ${label} }
projects:
  - project: ${project}
    default_locations: [${office}]
    probes:
      - url: https://example.com/follows
      - url: https://example.com/own
        locations: [${probeLocations}]
`;
    const files = new Map([["seed.yaml", file("Office", `local, ${office}`)]]);
    const dry = expectExit(
      await runCliOn(app, ["import", "seed.yaml", "--dry-run"], { files }),
      EXIT.ok,
    );
    assert.doesNotMatch(dry.stdout, /plt_/);
    assert.equal(
      (await api.get(`/api/v1/locations/${office}`)).status,
      404,
      "a dry run makes none",
    );

    const first = expectExit(await runCliOn(app, ["import", "seed.yaml"], { files }), EXIT.ok);
    const token = first.stdout.match(
      new RegExp(`^Token of location ${office}, shown this once.*\\n(plt_\\S+)$`, "m"),
    )?.[1];
    assert.ok(token, first.stdout);
    // The token printed is the location's: it claims its runs.
    const claim = await api.post("/api/v1/runner/claim", {
      runner: "r1",
      version: "t",
      wait_seconds: 0,
    }, { key: token });
    assert.equal(claim.status, 200, claim.text);
    assert.equal(claim.body.data.location, office);

    const probes = (await api.get(`/api/v1/projects/${project}/probes`)).body.data;
    const byUrl = Object.fromEntries(probes.map((p: { url: string }) => [p.url, p]));
    assert.equal(byUrl["https://example.com/follows"].locations, null);
    assert.deepEqual(byUrl["https://example.com/follows"].effective_locations, [office]);
    assert.deepEqual(byUrl["https://example.com/own"].locations, ["local", office]);

    const again = expectExit(
      await runCliOn(app, ["--json", "import", "seed.yaml"], { files }),
      EXIT.ok,
    ).json();
    assert.equal(again.meta.unchanged, again.data.length, JSON.stringify(again));

    // A new label updates the location (its token stays); new probe locations rewrite the probe.
    files.set("seed.yaml", file("HQ", office));
    const changed = expectExit(
      await runCliOn(app, ["--json", "import", "seed.yaml"], { files }),
      EXIT.ok,
    ).json();
    const actions = Object.fromEntries(
      changed.data.map((s: { kind: string; target?: string; action: string }) => [
        `${s.kind} ${s.target ?? ""}`,
        s.action,
      ]),
    );
    assert.equal(actions[`location ${office}`], "updated");
    assert.equal(actions["probe https://example.com/own"], "rewritten");
    assert.equal(actions["probe https://example.com/follows"], "unchanged");
    assert.equal((await api.get(`/api/v1/locations/${office}`)).body.data.label, "HQ");
    assert.ok(!JSON.stringify(changed).includes("plt_"));
    const stillWorks = await api.post("/api/v1/runner/claim", {
      runner: "r1",
      version: "t",
      wait_seconds: 0,
    }, { key: token });
    assert.equal(stillWorks.status, 200);
  });

  test("the built-in location in `locations`, and unknown names, are refused", async ({ app }) => {
    const builtIn = await runCliOn(app, ["import", "seed.yaml"], {
      files: { "seed.yaml": "locations: [{ name: local }]\n" },
    });
    assert.equal(builtIn.code, EXIT.usage);
    assert.match(builtIn.stderr, /built-in location/);

    const project = uniqueName();
    const unknown = await runCliOn(app, ["import", "seed.yaml"], {
      files: {
        "seed.yaml": `projects:\n  - project: ${project}\n    probes:\n` +
          "      - { url: https://example.com/, locations: [local, mars] }\n",
      },
    });
    assert.equal(unknown.code, EXIT.invalid);
    assert.match(unknown.stderr, /locations\.1: no location is named "mars"/);

    const badName = await runCliOn(app, ["import", "seed.yaml"], {
      files: { "seed.yaml": "locations: [{ name: -bad }, { name: ok }, { name: ok }]\n" },
    });
    assert.equal(badName.code, EXIT.usage);
    assert.match(badName.stderr, /locations\.0\.name/);
    assert.match(badName.stderr, /locations\.2\.name: listed twice/);
  });
});
