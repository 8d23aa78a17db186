/**
 * The typed client's audit log (`auditLog.list`) against a real app, in-process: the changes it
 * makes through `/trpc` are read back newest first, filtered and paged. On PGlite and, with
 * TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { apiSuite, BASE, TestClient, uniqueName } from "../server/testing/app.ts";
import { createProbeClient } from "./mod.ts";
import { clientOf, rejects } from "./testing.ts";

apiSuite("typed client: audit log", (test) => {
  test("the client's changes are in the log, newest first, by resource and page", async (t) => {
    const client = clientOf(t);
    const project = uniqueName();
    await client.projects.create({ project });
    await client.projects.update({ project, label: "Shop" });
    const { data, meta } = await client.auditLog.list({ resource: `project:${project}` });
    assert.deepEqual(data.map((e) => e.operation), ["projects.update", "projects.create"]);
    assert.deepEqual([data[0].before, data[0].after], [{ label: null }, { label: "Shop" }]);
    assert.equal(data[0].actor, "SERVICE_API_KEY");
    assert.equal(meta.next_after, null);
    const first = await client.auditLog.list({ resource: `project:${project}`, limit: 1 });
    assert.equal(first.data[0].id, data[0].id);
    const second = await client.auditLog.list({
      resource: `project:${project}`,
      limit: 1,
      after: first.meta.next_after!,
    });
    assert.equal(second.data[0].id, data[1].id);
    await rejects(() => client.auditLog.list({ since: "yesterday" }), 422, "validation_failed");
  });

  test("a key that is not an admin's is refused", async (t) => {
    const made = await new TestClient(t.app.handler).post("/api/v1/api-keys", {
      name: uniqueName("k"),
      role: "editor",
    });
    const editor = createProbeClient({
      baseUrl: BASE,
      apiKey: made.body.data.key,
      fetch: (input, init) => t.app.handler(new Request(input, init)),
    });
    await rejects(() => editor.auditLog.list(), 403, "forbidden");
  });
});
