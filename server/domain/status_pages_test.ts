/** A project's status page settings through the REST API and `/trpc`. */
import assert from "node:assert/strict";
import {
  MAX_STATUS_PAGE_DESCRIPTION,
  MAX_STATUS_PAGE_TITLE,
  STATUS_PAGE_DEFAULTS,
} from "@probe/shared";
import { apiSuite, BASE, type TestClient, uniqueName } from "../testing/app.ts";
import { createStatusPages } from "../edge/status_page.ts";

const path = (project: string) => `/api/v1/projects/${project}/status-page`;

async function newProject(api: TestClient, body: object = {}): Promise<string> {
  const project = uniqueName("spa");
  assert.equal((await api.post("/api/v1/projects", { project, ...body })).status, 201);
  return project;
}

const defaults = (project: string) => ({
  project,
  ...STATUS_PAGE_DEFAULTS,
  page_path: `/status/${project}`,
  json_path: `/status/${project}/status.json`,
  updated_at: null,
});

apiSuite("status page settings", (test) => {
  test("a project's page is private, untitled and without URLs until changed", async ({ api }) => {
    const project = await newProject(api, { label: "Shop", description: "internal notes" });
    const res = await api.get(path(project));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: defaults(project) });
    assert.equal((await api.get(`/status/${project}`, { key: null })).status, 404);
  });

  test("PATCH changes the fields it sends and keeps the others", async ({ api }) => {
    const project = await newProject(api, { label: "Shop" });
    const first = await api.patch(path(project), { public: true, title: "Shop status" });
    assert.equal(first.status, 200);
    const { updated_at } = first.body.data;
    assert.ok(Math.abs(Date.parse(updated_at) - Date.now()) < 10 * 60_000);
    assert.deepEqual(first.body.data, {
      ...defaults(project),
      public: true,
      title: "Shop status",
      updated_at,
    });

    const second = await api.patch(path(project), {
      description: "Everything the shop runs on",
      show_urls: true,
    });
    assert.deepEqual(second.body.data, {
      ...defaults(project),
      public: true,
      title: "Shop status",
      description: "Everything the shop runs on",
      show_urls: true,
      updated_at: second.body.data.updated_at,
    });
    assert.deepEqual((await api.get(path(project))).body, second.body);

    // null puts a text back to its default: the title is then the project's label.
    const cleared = await api.patch(path(project), { title: null, description: null });
    assert.equal(cleared.body.data.title, null);
    assert.equal(cleared.body.data.description, null);
    assert.equal(cleared.body.data.public, true);
    const page = await api.get(`/status/${project}/status.json`, { key: null });
    assert.equal(page.body.title, "Shop");
    assert.equal(page.body.description, null);
  });

  test("bad input is a 422 naming the field, and changes nothing", async ({ api }) => {
    const project = await newProject(api);
    const cases: [unknown, string][] = [
      [{ public: "true" }, "public"],
      [{ show_urls: 1 }, "show_urls"],
      [{ title: "" }, "title"],
      [{ title: "   " }, "title"],
      [{ title: "x".repeat(MAX_STATUS_PAGE_TITLE + 1) }, "title"],
      [{ title: 5 }, "title"],
      [{ description: "x".repeat(MAX_STATUS_PAGE_DESCRIPTION + 1) }, "description"],
      [{ description: "a\u0000b" }, "description"],
      [{ public: true, colour: "red" }, "colour"],
      [{ project: "other" }, "project"],
    ];
    for (const [body, field] of cases) {
      const res = await api.patch(path(project), body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.code, "validation_failed");
      assert.ok(
        res.body.error.details.some((d: { path: string }) => d.path === field),
        `${JSON.stringify(body)}: ${res.text}`,
      );
    }
    const empty = await api.patch(path(project), {});
    assert.equal(empty.status, 422);
    assert.equal(empty.body.error.message, "No fields were provided");
    assert.deepEqual((await api.get(path(project))).body, { data: defaults(project) });
  });

  test("a missing project is a 404 on both operations", async ({ api }) => {
    const missing = uniqueName("none");
    for (
      const res of [await api.get(path(missing)), await api.patch(path(missing), { public: true })]
    ) {
      assert.equal(res.status, 404);
      assert.equal(res.body.error.message, "Project not found");
    }
    const project = await newProject(api);
    assert.equal((await api.get(path(project), { key: null })).status, 401);
  });

  test("deleting a project deletes its page: a new project of that name starts private", async ({ api, app }) => {
    const project = await newProject(api);
    await api.patch(path(project), { public: true, title: "Old" });
    assert.equal((await api.get(`/status/${project}`, { key: null })).status, 200);
    assert.equal((await api.delete(`/api/v1/projects/${project}`)).status, 200);
    // Read afresh (the service keeps a page up to PUBLIC_CACHE_MS): no page any more.
    const page = createStatusPages({ db: app.database.db });
    const url = new URL(`${BASE}/status/${project}`);
    assert.equal(await page(new Request(url), url), null);
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    assert.deepEqual((await api.get(path(project))).body, { data: defaults(project) });
    assert.equal(await page(new Request(url), url), null);
  });

  test("the same settings over /trpc", async ({ api }) => {
    const project = await newProject(api);
    const update = await api.post("/trpc/statusPages.update", { project, show_urls: true });
    assert.equal(update.status, 200, update.text);
    assert.equal(update.body.result.data.data.show_urls, true);
    const input = encodeURIComponent(JSON.stringify({ project }));
    const read = await api.get(`/trpc/statusPages.get?input=${input}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.result.data, update.body.result.data);
  });
});
