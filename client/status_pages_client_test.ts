/**
 * The typed client's status page and badge calls against a real app, in-process (the client's
 * fetch hands each request to the app's handler), on PGlite and, with TEST_DATABASE_URL, on
 * PostgreSQL.
 */
import assert from "node:assert/strict";
import { apiSuite, BASE, TEST_API_KEY, uniqueName } from "../server/testing/app.ts";
import { createProbeClient, ProbeApiError } from "./mod.ts";

apiSuite("typed client: status pages and badges", (test) => {
  test("page settings, and badge tokens made, listed, rotated and deleted", async ({ app }) => {
    const seen: string[] = [];
    const client = createProbeClient({
      baseUrl: BASE,
      apiKey: TEST_API_KEY,
      fetch: (input, init) => {
        const request = new Request(input, init);
        seen.push(new URL(request.url).pathname);
        return app.handler(request);
      },
    });
    const project = uniqueName();
    await client.projects.create({ project });
    assert.equal((await client.statusPages.get({ project })).data.public, false);
    const updated = await client.statusPages.update({ project, public: true, title: "Shop" });
    assert.equal(updated.data.title, "Shop");
    const page = await app.handler(new Request(`${BASE}/status/${project}`));
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Shop/);

    const made = await client.badges.create({ project });
    const token = made.data.token;
    const badge = await app.handler(new Request(`${BASE}/badge/${token}/status.svg`));
    assert.equal(badge.status, 200);
    await badge.body?.cancel();
    const listed = await client.badges.list({ project });
    assert.deepEqual(listed.data.map((b) => b.id), [made.data.id]);
    assert.equal(listed.data[0].token, token, "a listed badge has its token");

    const rotated = await client.badges.rotate({ project, id: made.data.id });
    assert.notEqual(rotated.data.token, token);
    const old = await app.handler(new Request(`${BASE}/badge/${token}/status.svg`));
    assert.equal(old.status, 404);
    await old.body?.cancel();
    await client.badges.delete({ project, id: made.data.id });
    assert.deepEqual((await client.badges.list({ project })).data, []);
    assert.ok(seen.every((p) => p.startsWith("/trpc/")), "every call went through /trpc");

    try {
      await client.statusPages.get({ project: uniqueName("missing") });
      assert.fail("a missing project's page settings were answered");
    } catch (error) {
      assert.ok(error instanceof ProbeApiError);
      assert.equal(error.status, 404);
    }
  });
});
