/**
 * What runs last in a joined transaction (`runLast`): committed with the work or rolled back
 * with it, on the embedded database in its thread (where the commit's message carries it), in
 * the calling thread, and on PostgreSQL with TEST_DATABASE_URL.
 */
import assert from "node:assert/strict";
import { CompiledQuery, sql } from "kysely";
import { type DatabaseHandle, openDatabase } from "./database.ts";
import { afterCommit, inJoinedTransaction, runLast } from "./joined.ts";
import { backends, freshDatabase, migratedDump } from "../testing/app.ts";

const opens: [string, () => Promise<DatabaseHandle>][] = [
  [
    "embedded, in its thread",
    async () =>
      openDatabase({ kind: "pglite", thread: "worker", loadDataDir: await migratedDump() }),
  ],
  ["embedded, in the calling thread", () => freshDatabase("pglite")],
  ...backends().filter((b) => b === "postgres").map((
    b,
  ): [string, () => Promise<DatabaseHandle>] => ["postgresql", () => freshDatabase(b)]),
];

const insert = (id: number) => CompiledQuery.raw("insert into joined_t (id) values ($1)", [id]);

for (const [name, open] of opens) {
  Deno.test(`what runs last in a joined transaction commits or rolls back with it [${name}]`, async () => {
    const handle = await open();
    const db = handle.db;
    const ids = async () =>
      (await sql<{ id: number }>`select id from joined_t order by id`.execute(db)).rows
        .map((r) => r.id);
    try {
      await sql`create table joined_t (id int primary key)`.execute(db);
      const told: string[] = [];
      // Runs after the work, before the commit: the work does not see it, the commit keeps both.
      const seen = await inJoinedTransaction({ pool: db }, async (trx) => {
        await runLast(trx, insert(2));
        await trx.executeQuery(insert(1));
        afterCommit(trx, () => told.push("first"));
        return (await sql<{ id: number }>`select id from joined_t`.execute(trx)).rows.length;
      });
      assert.equal(seen, 1);
      assert.deepEqual(await ids(), [1, 2]);
      assert.deepEqual(told, ["first"]);

      // Its failure (a key taken) is the transaction's: the work is rolled back, nobody told.
      await assert.rejects(
        inJoinedTransaction({ pool: db }, async (trx) => {
          await trx.executeQuery(insert(3));
          await runLast(trx, insert(1));
          afterCommit(trx, () => told.push("second"));
        }),
        (error: { code?: string }) => error.code === "23505",
      );
      assert.deepEqual(await ids(), [1, 2]);
      assert.deepEqual(told, ["first"]);

      // Outside a joined transaction it runs at once.
      await runLast(db, insert(4));
      assert.deepEqual(await ids(), [1, 2, 4]);
    } finally {
      await handle.close();
    }
  });
}
