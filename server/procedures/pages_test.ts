import assert from "node:assert/strict";
import { sql } from "kysely";
import { MAX_PAGE_LIMIT } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { apiSuite, type TestClient, uniqueName } from "../testing/app.ts";
import { STREAM_PAGE_SIZE, streamList } from "./pages.ts";

// More than two streamed pages, and more than a list answered unpaged may hold.
const PROBES = 2 * STREAM_PAGE_SIZE + 203;

/** Stores `count` probes under a new project in one statement; their URLs, bytewise sorted. */
async function bigProject(api: TestClient, db: Db, count: number) {
  const project = uniqueName("big");
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  // Numbers unpadded and one upper-case host: bytewise order is not numeric or case-blind.
  await sql`insert into probes (project, probe_id, url, method, headers)
    select ${project}, md5(i::text),
      case when i = 7 then 'https://Z.example.com/' else 'https://t.example.com/' || i end,
      'GET', '{}'::json
    from generate_series(1, ${count}) as i`.execute(db);
  const urls = Array.from(
    { length: count },
    (_, n) => n === 6 ? "https://Z.example.com/" : `https://t.example.com/${n + 1}`,
  ).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { project, urls };
}

/** Every page of a REST list, by `limit` and `next_after`. */
async function walk(api: TestClient, path: string, limit: number) {
  const pages: unknown[][] = [];
  let after: string | null = null;
  do {
    const query = `limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
    const res = await api.get(`${path}${path.includes("?") ? "&" : "?"}${query}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get("transfer-encoding"), null, "a page is answered whole");
    assert.equal(res.body.meta.count, res.body.data.length);
    pages.push(res.body.data);
    after = res.body.meta.next_after;
  } while (after !== null);
  return pages;
}

apiSuite("long lists", (test) => {
  test("a list longer than a page is streamed whole, in bytewise order, on REST and /trpc", async ({ api, app }) => {
    const { project, urls } = await bigProject(api, app.database.db, PROBES);
    for (
      const path of [`/api/v1/projects/${project}/probes`, `/api/v1/probes?project=${project}`]
    ) {
      const res = await api.get(path);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("transfer-encoding"), "chunked", path);
      assert.deepEqual(res.body.meta, { count: PROBES, next_after: null });
      assert.deepEqual(res.body.data.map((p: { url: string }) => p.url), urls);
      // The streamed text is exactly what the whole list's JSON.stringify gives.
      assert.equal(res.text, JSON.stringify(res.body));
    }
    const input = encodeURIComponent(JSON.stringify({ project }));
    const trpc = await api.get(`/trpc/probes.listByProject?input=${input}`);
    assert.equal(trpc.status, 200);
    assert.equal(trpc.text, JSON.stringify(trpc.body));
    assert.deepEqual(trpc.body.result.data.data.map((p: { url: string }) => p.url), urls);
    assert.deepEqual(trpc.body.result.data.meta, { count: PROBES, next_after: null });
  });

  test("limit and after page through the same list", async ({ api, app }) => {
    const { project, urls } = await bigProject(api, app.database.db, PROBES);
    const pages = await walk(api, `/api/v1/projects/${project}/probes`, 500);
    assert.deepEqual(pages.map((page) => page.length), [500, 500, 203]);
    assert.deepEqual(pages.flat().map((p) => (p as { url: string }).url), urls);
    // The same through the list of all projects filtered by name, and on /trpc.
    const filtered = await walk(api, `/api/v1/probes?project=${project}`, 1000);
    assert.deepEqual(filtered.flat(), pages.flat());
    const input = encodeURIComponent(JSON.stringify({ project, limit: 2 }));
    const first = await api.get(`/trpc/probes.listByProject?input=${input}`);
    assert.deepEqual(first.body.result.data.data, pages[0].slice(0, 2));
    assert.equal(typeof first.body.result.data.meta.next_after, "string");

    // Streaming from a cursor gives the rest of the list.
    const after = (await api.get(`/api/v1/projects/${project}/probes?limit=1000`)).body.meta
      .next_after;
    const rest = await api.get(`/api/v1/projects/${project}/probes?after=${after}`);
    assert.deepEqual(rest.body.data, pages.flat().slice(1000));
  });

  test("projects are paged and streamed the same way", async ({ api }) => {
    const names = Array.from({ length: 12 }, (_, i) => `${uniqueName("pp")}-${i}`);
    for (const project of names) await api.post("/api/v1/projects", { project });
    const whole = await api.get("/api/v1/projects");
    assert.equal(whole.headers.get("transfer-encoding"), "chunked");
    const all = whole.body.data.map((p: { project: string }) => p.project);
    assert.deepEqual(all, [...all].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const name of names) assert.ok(all.includes(name));
    const pages = await walk(api, "/api/v1/projects", 5);
    assert.deepEqual(pages.flat().map((p) => (p as { project: string }).project), all);
  });

  test("a wrong limit or cursor is a 422 naming it, on REST and /trpc", async ({ api, app }) => {
    const { project } = await bigProject(api, app.database.db, 3);
    const other = (await api.get(`/api/v1/projects/${project}/probes?limit=1`)).body.meta
      .next_after;
    const path = `/api/v1/projects/${project}/probes`;
    const cases: [string, string][] = [
      ["limit=0", "limit"],
      [`limit=${MAX_PAGE_LIMIT + 1}`, "limit"],
      ["limit=ten", "limit"],
      ["after=not-a-cursor", "after"],
      [`after=${btoa('["a","b","c"]')}`, "after"],
      [`after=${btoa("[1,2]")}`, "after"],
      [`after=${"x".repeat(5000)}`, "after"],
    ];
    for (const [query, field] of cases) {
      const res = await api.get(`${path}?${query}`);
      assert.equal(res.status, 422, query);
      assert.equal(res.body.error.code, "validation_failed");
      assert.equal(res.body.error.details[0].path, field, query);
    }
    // A cursor of one project's list continues no other project's list.
    const elsewhere = await bigProject(api, app.database.db, 2);
    const res = await api.get(`/api/v1/projects/${elsewhere.project}/probes?after=${other}`);
    assert.equal(res.status, 422);
    assert.equal(res.body.error.details[0].path, "after");

    const input = encodeURIComponent(JSON.stringify({ project, after: "nope" }));
    const trpc = await api.get(`/trpc/probes.listByProject?input=${input}`);
    assert.equal(trpc.status, 422);
    assert.equal(trpc.body.error.data.error.code, "validation_failed");
  });

  test("in a batch, a list too long for one answer is told to page", async ({ api, app }) => {
    const { project } = await bigProject(api, app.database.db, MAX_PAGE_LIMIT + 1);
    const input = encodeURIComponent(
      JSON.stringify({ 0: { project }, 1: { project, limit: 10 } }),
    );
    const res = await api.get(
      `/trpc/probes.listByProject,probes.listByProject?batch=1&input=${input}`,
    );
    assert.equal(res.status, 207);
    const [whole, page] = res.body;
    assert.equal(whole.error.data.error.code, "validation_failed");
    assert.equal(whole.error.data.error.details[0].path, "limit");
    assert.match(whole.error.data.error.details[0].message, /limit and after/);
    assert.equal(page.result.data.data.length, 10);
  });
});

Deno.test("a page that fails after the first errors the stream instead of ending it", async () => {
  const seen: unknown[] = [];
  const failure = new Error("the database went away");
  const call = (_ctx: unknown, _path: readonly string[], input: unknown) => {
    const { after } = input as { after?: string };
    return after === undefined
      ? Promise.resolve({ data: [{ n: 1 }], meta: { next_after: "page-2" } })
      : Promise.reject(failure);
  };
  const stream = await streamList({
    call,
    ctx: null,
    path: ["probes", "list"],
    input: {},
    onError: (error) => seen.push(error),
  });
  await assert.rejects(new Response(stream).text(), failure);
  assert.deepEqual(seen, [failure]);
});
