// The pools' figures (`DatabaseHandle.poolStats`) while queries and a transaction are under way.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { backends, freshDatabase, migratedDump } from "../testing/app.ts";
import { openDatabase } from "./database.ts";

for (const backend of backends()) {
  Deno.test(`pool figures count queries in flight, in use and waiting [${backend}]`, async () => {
    // The embedded database in its worker thread, as the server runs it: in the calling thread a
    // statement holds the thread, and nothing can be seen while it runs. Loaded from the tests'
    // dump: creating a database takes seconds.
    const handle = backend === "pglite"
      ? await openDatabase({ kind: "pglite", thread: "worker", loadDataDir: await migratedDump() })
      : await freshDatabase(backend);
    const pool = backend === "pglite" ? "embedded" : "main";
    const stats = () => handle.poolStats!().find((s) => s.pool === pool)!;
    try {
      await sql`select 1`.execute(handle.db);
      assert.deepEqual(
        { inFlight: stats().inFlight, inUse: stats().inUse, waiting: stats().waiting },
        { inFlight: 0, inUse: 0, waiting: 0 },
      );
      assert.ok(stats().max >= 1);

      const slow = [1, 2].map(() => sql`select pg_sleep(0.3)`.execute(handle.db));
      await new Promise((r) => setTimeout(r, 100));
      const during = stats();
      if (backend === "pglite") {
        // One runs in the worker; Kysely queues the other before it reaches the database.
        assert.deepEqual([during.inFlight, during.inUse], [1, 1], JSON.stringify(during));
      } else {
        assert.equal(during.inFlight, 2);
        assert.ok(during.inUse >= 1, JSON.stringify(during));
        assert.equal(during.inUse + during.waiting, 2, JSON.stringify(during));
      }
      await Promise.all(slow);
      assert.equal(stats().inFlight, 0);

      // A transaction holds its connection while it waits between queries.
      const release = Promise.withResolvers<void>();
      const begun = Promise.withResolvers<void>();
      const tx = handle.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        begun.resolve();
        await release.promise;
      });
      await begun.promise;
      const holding = stats();
      assert.equal(holding.inUse, 1, JSON.stringify(holding));
      assert.equal(holding.waiting, 0, JSON.stringify(holding));
      release.resolve();
      await tx;
      assert.equal(stats().inUse, 0);
    } finally {
      await handle.close();
    }
  });
}
