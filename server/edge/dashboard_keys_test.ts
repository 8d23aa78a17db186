/**
 * The dashboard's API keys page: its place (`#/api-keys`, `server/ui/routes.js`) and the body its
 * form makes (`server/ui/keys.js`), checked against the API: plain functions, without a browser,
 * on PGlite and, with TEST_DATABASE_URL, on PostgreSQL for the calls.
 */
import assert from "node:assert/strict";
import { href, parseRoute } from "../ui/routes.js";
import { newKeyBody } from "../ui/keys.js";
import { apiSuite, uniqueName } from "../testing/app.ts";

Deno.test("the keys page has a place of its own", () => {
  assert.deepEqual(parseRoute("#/api-keys"), { name: "keys" });
  assert.deepEqual(parseRoute(href.keys()), { name: "keys" });
  assert.deepEqual(parseRoute("#/api-keys/x"), { name: "notFound" });
});

Deno.test("the form's body: projects listed or every one, the expiry as an instant or never", () => {
  assert.deepEqual(newKeyBody({ name: " ci ", role: "viewer", projects: "", expires: "" }), {
    name: "ci",
    role: "viewer",
    projects: null,
    expires_at: null,
  });
  const body = newKeyBody({
    name: "ci",
    role: "editor",
    projects: "shop, blog",
    expires: "2099-01-01T10:30",
  });
  assert.deepEqual(body.projects, ["shop", "blog"]);
  assert.equal(body.expires_at, new Date("2099-01-01T10:30").toISOString());
});

apiSuite("dashboard: the keys page's calls", (test) => {
  test("create (the key once), list with last use, revoke", async ({ api }) => {
    const project = uniqueName();
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const name = uniqueName("ui");
    const made = await api.post(
      "/api/v1/api-keys",
      newKeyBody({ name, role: "editor", projects: project, expires: "" }),
    );
    assert.equal(made.status, 201, made.text);
    assert.equal((await api.get("/api/v1/whoami", { key: made.body.data.key })).status, 200);
    const listed = await api.get("/api/v1/api-keys");
    const row = listed.body.data.find((k: { name: string }) => k.name === name);
    assert.deepEqual(row.projects, [project]);
    assert.equal(typeof row.last_used_at, "string");
    assert.equal((await api.delete(`/api/v1/api-keys/${name}`)).status, 204);
    assert.equal((await api.get("/api/v1/whoami", { key: made.body.data.key })).status, 401);
  });
});
