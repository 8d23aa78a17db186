/**
 * The dashboard's audit log page's place (`#/audit-log`, `server/ui/routes.js`) and the list's
 * query its filters make (`server/ui/audit.js`), checked against the API: plain functions,
 * without a browser, on PGlite and, with TEST_DATABASE_URL, on PostgreSQL for the query.
 */
import assert from "node:assert/strict";
import { href, parseRoute } from "../ui/routes.js";
import { auditQuery } from "../ui/audit.js";
import { apiSuite, uniqueName } from "../testing/app.ts";

const NONE = { actor: "", resource: "", since: "", before: "" };

Deno.test("the audit log has a place of its own", () => {
  assert.deepEqual(parseRoute("#/audit-log"), { name: "audit" });
  assert.deepEqual(parseRoute(href.audit()), { name: "audit" });
  assert.deepEqual(parseRoute("#/audit-log/x"), { name: "notFound" });
});

Deno.test("the page's query names only the filters given, a page of 50 first", () => {
  assert.equal(auditQuery(NONE, null), "limit=50");
  assert.equal(
    auditQuery({ ...NONE, actor: "deploy bot", resource: "project:shop" }, "abc"),
    "limit=50&actor=deploy+bot&resource=project%3Ashop&after=abc",
  );
  const since = auditQuery({ ...NONE, since: "2026-11-29T10:30" }, null);
  assert.equal(new URLSearchParams(since).get("since"), new Date("2026-11-29T10:30").toISOString());
});

apiSuite("dashboard: the audit log's query", (test) => {
  test("the service answers the page's query with the entries it filters", async ({ api }) => {
    const project = uniqueName();
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const answer = await api.get(
      `/api/v1/audit-log?${auditQuery({ ...NONE, resource: `project:${project}` }, null)}`,
    );
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body.data.map((e: { operation: string }) => e.operation), [
      "projects.create",
    ]);
  });
});
