import assert from "node:assert/strict";
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from "kysely";
import type { Db } from "./database.ts";
import type { Database } from "./schema.ts";
import { backends, freshDatabase } from "../testing/app.ts";
import { migrateToLatest } from "./migrator.ts";
import { prepared } from "./prepared.ts";

for (const backend of backends()) {
  Deno.test(`a prepared query runs with each call's values [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    try {
      const { db } = handle;
      await migrateToLatest(db);
      await db.insertInto("projects").values([
        { name: "a", label: "first" },
        { name: "b", label: "second" },
      ]).execute();
      let built = 0;
      const labelled = prepared((db, name: string, label: string) => {
        built++;
        return db.selectFrom("projects").select(["name", "label"])
          .where("name", "=", name).where("label", "=", label).where("status", "=", "enabled");
      });
      assert.deepEqual(await labelled(db, "a", "first"), [{ name: "a", label: "first" }]);
      assert.deepEqual(await labelled(db, "b", "second"), [{ name: "b", label: "second" }]);
      assert.deepEqual(await labelled(db, "a", "second"), []);
      // A value that looks like the internal stand-ins is just a value.
      assert.deepEqual(await labelled(db, "slot-0-x", "first"), []);
      assert.equal(built, 1, "built and compiled once");
    } finally {
      await handle.close();
    }
  });
}

Deno.test("a prepared query that does not use an argument as a value is refused", async () => {
  // Refused while it compiles, before it could run: PostgreSQL's compiler with no database.
  const db: Db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  const ignoring = prepared((db, _name: string) => db.selectFrom("projects").selectAll());
  await assert.rejects(() => ignoring(db, "a"), /does not use argument 0/);
});
