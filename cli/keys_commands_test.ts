/**
 * `keys list|show|create|update|rotate|delete`: the CLI in-process against a real app, on PGlite
 * and, with TEST_DATABASE_URL, on PostgreSQL; a key made here used by the CLI as its key.
 */
import assert from "node:assert/strict";
import { apiSuite, uniqueName } from "../server/testing/app.ts";
import { EXIT } from "./exit_codes.ts";
import { expectExit, runCliOn } from "./testing.ts";

apiSuite("cli: keys", (test) => {
  test("create prints the key once; list, show, update, rotate and delete", async ({ app }) => {
    const cli = (...args: string[]) => runCliOn(app, args);
    const project = uniqueName();
    expectExit(await cli("projects", "create", project), EXIT.ok);
    const name = uniqueName("ci");
    const made = expectExit(
      await cli("keys", "create", name, "--role", "editor", "--projects", project),
      EXIT.ok,
    );
    const key = made.stdout.match(/\b(psk_[A-Za-z0-9_-]+)/)?.[1];
    assert.ok(key, made.stdout);
    assert.match(made.stdout, /shown this once/);

    const listed = expectExit(await cli("keys", "list"), EXIT.ok).stdout;
    const [head, first, ...rest] = listed.trimEnd().split("\n");
    assert.match(head, /^NAME\s+ROLE\s+PROJECTS\s+CREATED_BY\s+EXPIRES_AT\s+LAST_USED$/);
    assert.match(first, /^SERVICE_API_KEY \(configured\)\s+admin\s+all\s+-\s+-\s+-$/);
    assert.ok(
      rest.some((l) =>
        new RegExp(`^${name}\\s+editor\\s+${project}\\s+SERVICE_API_KEY\\s+-\\s+-$`).test(l)
      ),
      listed,
    );
    assert.ok(!listed.includes(key), "a list never shows a key");

    // The key made here is the CLI's key: an editor of its project, not an admin.
    const asKey = (...args: string[]) => runCliOn(app, args, { env: { SERVICE_API_KEY: key } });
    expectExit(await asKey("projects", "update", project, "--label", "Shop"), EXIT.ok);
    expectExit(await asKey("keys", "list"), EXIT.unauthorized);

    expectExit(
      await cli("keys", "update", name, "--role", "viewer", "--expires-at", "2099-01-01T00:00:00Z"),
      EXIT.ok,
    );
    const shown = expectExit(await cli("--json", "keys", "show", name), EXIT.ok).json();
    assert.equal(shown.data.role, "viewer");
    assert.equal(shown.data.expires_at, "2099-01-01T00:00:00.000Z");
    assert.equal(shown.data.key, undefined);
    expectExit(await cli("keys", "update", name, "--no-expires-at", "--projects", "all"), EXIT.ok);
    const cleared = expectExit(await cli("--json", "keys", "show", name), EXIT.ok).json();
    assert.equal(cleared.data.expires_at, null);
    assert.equal(cleared.data.projects, null);

    const rotated = expectExit(await cli("--json", "keys", "rotate", name), EXIT.ok).json();
    assert.match(rotated.data.key, /^psk_/);
    expectExit(await asKey("projects", "list"), EXIT.unauthorized);

    expectExit(await cli("keys", "create", "x", "--role", "owner"), EXIT.usage);
    expectExit(await cli("keys", "create", name, "--role", "viewer"), EXIT.conflict);
    expectExit(await cli("keys", "delete", "SERVICE_API_KEY"), EXIT.conflict);
    expectExit(await cli("keys", "delete", name), EXIT.ok);
    expectExit(await cli("keys", "show", name), EXIT.notFound);
  });
});
