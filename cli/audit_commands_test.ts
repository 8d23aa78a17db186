/**
 * `audit list`: the CLI in-process against a real app, on PGlite and, with TEST_DATABASE_URL, on
 * PostgreSQL. Its own changes are read back, filtered and paged; a key that is not an admin's is
 * refused.
 */
import assert from "node:assert/strict";
import { apiSuite, TestClient, uniqueName } from "../server/testing/app.ts";
import { EXIT } from "./exit_codes.ts";
import { expectExit, runCliOn } from "./testing.ts";

apiSuite("cli: audit", (test) => {
  test("list shows the CLI's own changes, by resource, a page at a time", async ({ app }) => {
    const cli = (...args: string[]) => runCliOn(app, args);
    const project = uniqueName();
    expectExit(await cli("projects", "create", project), EXIT.ok);
    expectExit(await cli("projects", "update", project, "--label", "Shop"), EXIT.ok);

    const listed = expectExit(
      await cli("audit", "list", "--resource", `project:${project}`),
      EXIT.ok,
    )
      .stdout.trimEnd().split("\n");
    assert.match(listed[0], /^ID\s+AT\s+ACTOR\s+OPERATION\s+RESOURCE\s+FIELDS\s+ADDRESS$/);
    assert.match(listed[1], new RegExp(`projects\\.update\\s+project:${project}\\s+label\\s`));
    assert.match(
      listed[2],
      new RegExp(`SERVICE_API_KEY\\s+projects\\.create\\s+project:${project}`),
    );
    assert.equal(listed.length, 3);

    const page = expectExit(
      await cli("audit", "list", "--resource", `project:${project}`, "--limit", "1"),
      EXIT.ok,
    ).stdout;
    const after = page.match(/Next page: --after (\S+)/)?.[1];
    assert.ok(after, page);
    const next = await cli("audit", "list", "--resource", `project:${project}`, "--after", after);
    assert.match(expectExit(next, EXIT.ok).stdout, /projects\.create/);

    const json = (await cli("audit", "list", "--resource", `project:${project}`, "--json")).json();
    assert.deepEqual(json.data[0].after, { label: "Shop" });
    assert.equal(
      expectExit(await cli("audit", "list", "--actor", "nobody"), EXIT.ok).stdout.trim(),
      "No entries.",
    );
  });

  test("a key that is not an admin's is refused, and a bad time named", async ({ app }) => {
    const made = await new TestClient(app.handler).post("/api/v1/api-keys", {
      name: uniqueName("k"),
      role: "viewer",
    });
    const refused = await runCliOn(app, ["audit", "list"], {
      env: { SERVICE_API_KEY: made.body.data.key },
    });
    assert.notEqual(refused.code, EXIT.ok);
    assert.match(refused.stderr, /forbidden|may not/i);
    const bad = await runCliOn(app, ["audit", "list", "--since", "yesterday"]);
    assert.notEqual(bad.code, EXIT.ok);
    assert.match(bad.stderr, /since/);
  });
});
