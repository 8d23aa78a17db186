/**
 * The typed client's API keys calls against a real app in-process, on PGlite and, with
 * TEST_DATABASE_URL, on PostgreSQL: the key once, its record, the configured key listed,
 * refusals, and a key made here used by a client of its own.
 */
import assert from "node:assert/strict";
import { apiSuite, BASE, uniqueName } from "../server/testing/app.ts";
import { createProbeClient } from "./client.ts";
import { clientOf, rejects } from "./testing.ts";

apiSuite("typed client: API keys", (test) => {
  test("list, create (key once), get, update, rotate, delete", async ({ app }) => {
    const client = clientOf({ app });
    const project = uniqueName();
    await client.projects.create({ project });
    const name = uniqueName("key");
    const made = await client.apiKeys.create({ name, role: "editor", projects: [project] });
    assert.match(made.data.key, /^psk_/);
    assert.equal(made.data.created_by, "SERVICE_API_KEY");
    const read = await client.apiKeys.get({ name });
    assert.ok(!("key" in read.data), "a read has no key");
    assert.deepEqual(read.data.projects, [project]);
    const listed = await client.apiKeys.list();
    assert.equal(listed.data[0].name, "SERVICE_API_KEY");
    assert.equal(listed.data[0].configured, true);
    assert.ok(!JSON.stringify(listed).includes(made.data.key));

    // The key made here calls as an editor of its project.
    const asKey = createProbeClient({
      baseUrl: BASE,
      apiKey: made.data.key,
      fetch: (input, init) => app.handler(new Request(input, init)),
    });
    await asKey.projects.update({ project, label: "Edited" });
    await rejects(() => asKey.apiKeys.list(), 403, "forbidden");

    const updated = await client.apiKeys.update({ name, role: "viewer", projects: null });
    assert.equal(updated.data.role, "viewer");
    assert.equal(updated.data.projects, null);
    await rejects(() => asKey.projects.update({ project, label: "No" }), 403, "forbidden");

    const rotated = await client.apiKeys.rotate({ name });
    assert.notEqual(rotated.data.key, made.data.key);
    await rejects(() => asKey.projects.list(), 401, "unauthorized");

    await rejects(() => client.apiKeys.create({ name, role: "viewer" }), 409, "conflict");
    await rejects(
      () => client.apiKeys.update({ name: "SERVICE_API_KEY", role: "viewer" }),
      409,
      "conflict",
    );
    await rejects(
      () => client.apiKeys.create({ name: uniqueName(), role: "viewer", projects: ["nope"] }),
      422,
      "validation_failed",
      "projects.0",
    );
    await client.apiKeys.delete({ name });
    await rejects(() => client.apiKeys.get({ name }), 404, "not_found");
  });
});
