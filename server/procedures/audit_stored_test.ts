/**
 * A project's update hands its audit entry the project before and after from its own statement
 * (`stored`, `storage/joined.ts`) instead of the entry reading it: the entry holds the same as
 * with the reads, the fields of the project's read (`projects.get`) that changed, whatever the
 * update changes. On the embedded database, in its thread as the service runs it, and on
 * PostgreSQL with TEST_DATABASE_URL.
 */
import assert from "node:assert/strict";
import { openDatabase } from "../storage/database.ts";
import { backends, freshDatabase, migratedDump } from "../testing/app.ts";
import { createAuditor } from "./audit.ts";
import { createProcedureCaller } from "./caller.ts";
import { createContext } from "./context.ts";
import { appRouter } from "./router.ts";

type Fields = Record<string, unknown>;

/** The fields of the two reads that differ, each side keeping its own: an update's entry. */
function changed(before: Fields, after: Fields): [Fields, Fields] {
  const was: Fields = {};
  const now: Fields = {};
  for (const key of Object.keys(after)) {
    if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
    was[key] = before[key];
    now[key] = after[key];
  }
  return [was, now];
}

for (const backend of backends()) {
  Deno.test(`a project's update: its entry holds what the reads show changed [${backend}]`, async () => {
    const handle = backend === "pglite"
      ? await openDatabase({ kind: "pglite", thread: "worker", loadDataDir: await migratedDump() })
      : await freshDatabase(backend);
    try {
      const call = createProcedureCaller(appRouter);
      const plain = createContext({ db: handle.db, authenticated: true });
      const audited = {
        ...plain,
        audit: createAuditor(appRouter),
        request: { address: "127.0.0.1", userAgent: "test", requestId: "r-1" },
      };
      const project = "shop";
      await call(plain, ["projects", "create"], { project, label: "Shop" });
      const read = async () =>
        (await call(plain, ["projects", "get"], { project }) as { data: Fields }).data;
      const entries = async (limit: number) =>
        (await call(plain, ["auditLog", "list"], { limit }) as { data: Fields[] }).data;
      const patches: Fields[] = [
        { label: "Shop 2" },
        { description: "The shop", status: "disabled" },
        { default_locations: ["local"] },
        { label: null, status: "enabled", default_locations: null },
      ];
      for (const patch of patches) {
        const before = await read();
        await call(audited, ["projects", "update"], { project, ...patch });
        const after = await read();
        const [entry] = await entries(1);
        assert.equal(entry.operation, "projects.update");
        assert.deepEqual(entry.resource, { type: "project", id: project });
        assert.deepEqual(
          [entry.before, entry.after],
          changed(before, after),
          JSON.stringify(patch),
        );
      }
      // A refused update (no such project) leaves no entry.
      await assert.rejects(call(audited, ["projects", "update"], { project: "none", label: "x" }));
      const updates = (await entries(10)).filter((e) => e.operation === "projects.update");
      assert.equal(updates.length, patches.length);
    } finally {
      await handle.close();
    }
  });
}
