/**
 * The query deadline of the PostgreSQL dialect (a slow database must fail a request with 503, not
 * hang it), against a server that is slow to answer (`pg_sleep`); a server that cannot answer at
 * all is e2e/timed/partition_test.ts. In the end-to-end tier: it waits seconds of real time and bounds
 * how long a failure takes, which a machine busy with the fast tier's files can stretch.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import postgres from "postgres";
import { toApiError } from "../../server/procedures/errors.ts";
import { createPostgresDatabase } from "../../server/testing/app.ts";
import { type DatabaseHandle, openDatabase, withBudget } from "../../server/storage/database.ts";

const DEADLINE_MS = 300;

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const failure = (work: Promise<unknown>) => work.then(() => null, (e) => e);

Deno.test({
  name: "a query past its deadline answers 503 at once and its connection is ended [postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async (t) => {
    const { url, drop } = await createPostgresDatabase();
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    let handle: DatabaseHandle | undefined;
    try {
      handle = await openDatabase({ kind: "postgres", url, poolSize: 2, queryDeadlineMs: 300 });
      const db = handle.db;
      await sql`select 1`.execute(db);
      await sql`create table t (n int)`.execute(db);
      /** The backends whose last query was `marker`, by state. */
      const backends = async (marker: string) =>
        (await admin.unsafe<{ state: string }[]>(
          `select state from pg_stat_activity where query like '%${marker}%'
             and pid <> pg_backend_pid()`,
        )).map((r) => r.state);
      /** The backends of `marker` left once they have gone, or after 5 s. */
      const left = async (marker: string) => {
        const until = Date.now() + 5_000;
        let found = await backends(marker);
        while (found.length > 0 && Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          found = await backends(marker);
        }
        return found;
      };

      await t.step("a query", async () => {
        const { value: error, ms } = await timed(() =>
          failure(sql`select pg_sleep(1.2) /* slow-read */`.execute(db))
        );
        assert.equal(error?.code, "QUERY_DEADLINE");
        assert.ok(ms >= DEADLINE_MS && ms < DEADLINE_MS + 200, `failed after ${Math.round(ms)} ms`);
        const { status, body } = toApiError(error);
        assert.equal(status, 503);
        assert.equal(body.error.code, "service_unavailable");
        // The pool goes on, on connections that answer.
        const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
        assert.equal(rows[0].one, 1);
        // The connection was ended by the service: once the server finishes the sleep and tries
        // to answer, it finds no one, and the backend goes (kept, it would sit there idle).
        assert.deepEqual(await left("slow-read"), []);
      });

      await t.step("a statement of a transaction, without waiting for a rollback", async () => {
        const { value: error, ms } = await timed(() =>
          failure(
            db.transaction().execute(async (trx) => {
              await sql`insert into t values (1)`.execute(trx);
              await sql`select pg_sleep(1.2) /* slow-write */`.execute(trx);
            }),
          )
        );
        assert.equal(error?.code, "QUERY_DEADLINE");
        assert.ok(ms < DEADLINE_MS + 200, `failed after ${Math.round(ms)} ms`);
        assert.deepEqual(await left("slow-write"), []);
        // Its connection went with the transaction in it: nothing of it was committed.
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from t`.execute(db);
        assert.equal(rows[0].n, 0);
      });

      await t.step("work with a budget of its own is not cut at the deadline", async () => {
        for (const budget of ["projectDelete", "runner", "migrations"] as const) {
          const { rows } = await sql<{ done: boolean }>`
            select true as done from pg_sleep(0.5)`.execute(withBudget(db, budget));
          assert.deepEqual(rows, [{ done: true }], budget);
        }
        const committed = await withBudget(db, "projectDelete").transaction().execute(
          async (trx) => {
            await sql`select pg_sleep(0.5)`.execute(trx);
            await sql`insert into t values (2)`.execute(trx);
            return true;
          },
        );
        assert.equal(committed, true);
      });
    } finally {
      await handle?.close();
      await admin.end();
      await drop();
    }
  },
});

Deno.test({
  // postgres.js can write a transaction's rollback on a connection it has closed, from a
  // setImmediate, as an uncaught TypeError that would end the process.
  name: "a transaction whose connection was ended under it fails with 503, and nothing throws " +
    "uncaught [postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const uncaught: unknown[] = [];
    const onError = (event: ErrorEvent) => {
      uncaught.push(event.error);
      event.preventDefault(); // seen, so that the test can say what it was
    };
    globalThis.addEventListener("error", onError);
    let handle: DatabaseHandle | undefined;
    try {
      handle = await openDatabase({ kind: "postgres", url, poolSize: 3, queryDeadlineMs: 500 });
      const db = handle.db;
      await sql`create table t (n int)`.execute(db);
      for (let round = 0; round < 3; round++) {
        // A query that passes its deadline ends every connection of the pool that has waited
        // as long, the transaction's among them: its statement fails with CONNECTION_CLOSED,
        // not at its own deadline, and Kysely then rolls back on that connection.
        const slow = failure(sql`select pg_sleep(2)`.execute(db));
        const transaction = failure(
          db.transaction().execute(async (trx) => {
            await sql`insert into t values (1)`.execute(trx);
            await sql`select pg_sleep(2)`.execute(trx);
          }),
        );
        assert.equal((await slow)?.code, "QUERY_DEADLINE");
        const error = await transaction;
        assert.ok(error, "the transaction fails");
        assert.equal(toApiError(error).status, 503, String(error));
        // Some turns later, whatever postgres.js had scheduled has run.
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.deepEqual(uncaught.map(String), [], "nothing was thrown uncaught");
        // And the pool serves on, transactions included.
        const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
        assert.equal(rows[0].one, 1);
        await db.transaction().execute((trx) => sql`insert into t values (2)`.execute(trx));
      }
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from t`.execute(db);
      assert.equal(rows[0].n, 3, "only the committed transactions' rows");
    } finally {
      globalThis.removeEventListener("error", onError);
      await handle?.close();
      await drop();
    }
  },
});
