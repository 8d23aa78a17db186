/**
 * The query deadline of the PostgreSQL dialect (a slow database must fail a request with 503, not
 * hang it) is tested against a server slow to answer (`pg_sleep`) in the end-to-end tier, since it
 * takes seconds of real waiting and bounds how long a failure takes:
 * `e2e/timed/postgres_deadline_test.ts`. Here: the embedded database has no such deadline to cut work
 * that has a budget of its own.
 */
import assert from "node:assert/strict";
import { freshDatabase } from "../testing/app.ts";
import { withBudget } from "./database.ts";

Deno.test("on the embedded database, work with a budget runs on the database itself", async () => {
  const handle = await freshDatabase("pglite");
  try {
    assert.equal(withBudget(handle.db, "projectDelete"), handle.db);
  } finally {
    await handle.close();
  }
});
