/**
 * The lanes' choice of connection, on PostgreSQL (TEST_DATABASE_URL; skipped without it): each
 * query's backend tells which lane's connection ran it.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { Lanes } from "./lanes.ts";
import { createPostgresDatabase } from "../testing/app.ts";

const ignore = !Deno.env.get("TEST_DATABASE_URL");

async function withLanes(count: number, test: (lanes: Lanes) => Promise<void>): Promise<void> {
  const database = await createPostgresDatabase();
  const lanes = new Lanes(count, () => postgres(database.url, { max: 1, onnotice: () => {} }));
  try {
    await test(lanes);
  } finally {
    await lanes.end();
    await database.drop();
  }
}

/** The backend that answers a plain query, which waits `ms` on the server first. */
async function backend(lanes: Lanes, ms = 0): Promise<number> {
  const [row] = await lanes.unsafe<{ pid: number }[]>(
    "select pg_backend_pid() as pid, pg_sleep($1::float8 / 1000)",
    [ms],
  );
  return row.pid;
}

/** `pending`, or a failure when it takes longer than `ms` (the test fails rather than hangs). */
async function within<T>(ms: number, pending: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not answered within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([pending, late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test({
  name: "lanes: one query at a time stays on the first connection; queries at once spread",
  ignore,
  async fn() {
    await withLanes(3, async (lanes) => {
      const first = await backend(lanes);
      for (let i = 0; i < 5; i++) assert.equal(await backend(lanes), first);
      const together = await Promise.all([
        backend(lanes, 200),
        backend(lanes, 200),
        backend(lanes, 200),
      ]);
      assert.equal(new Set(together).size, 3, `three at once ran on ${together}`);
      assert.equal(together[0], first);
    });
  },
});

Deno.test({
  name: "lanes: a query goes to the connection with the fewest in flight, pipelined there",
  ignore,
  async fn() {
    await withLanes(2, async (lanes) => {
      // Three slow queries on two lanes: the third pipelines behind one of the first two.
      const pids = await Promise.all([
        backend(lanes, 150),
        backend(lanes, 150),
        backend(lanes, 150),
      ]);
      assert.equal(new Set(pids).size, 2);
      // Then, with one lane busy with two, a quick query goes to the other.
      const busy = [backend(lanes, 300), backend(lanes, 300)];
      const other = backend(lanes, 300);
      const quick = await backend(lanes);
      const [a, b] = await Promise.all(busy);
      assert.notEqual(a, b, "the first two went to different lanes");
      assert.equal(quick, await other === a ? b : a, "the fourth went to the lane with one");
    });
  },
});

Deno.test({
  name: "lanes: a transaction's connection takes no plain query while another lane is free",
  ignore,
  async fn() {
    await withLanes(2, async (lanes) => {
      const reservation = await lanes.reserve();
      const [{ pid: held }] = await reservation.sql.unsafe<{ pid: number }[]>(
        "select pg_backend_pid() as pid",
      );
      // While it is held, every plain query runs on the other connection, and none waits for it.
      const plain = Promise.all(Array.from({ length: 6 }, () => backend(lanes, 20)));
      let pids: number[];
      try {
        pids = await within(2000, plain);
      } finally {
        reservation.release();
        reservation.release(); // once only
        await plain.catch(() => {});
      }
      assert.ok(pids.every((pid) => pid !== held), `plain queries ran on ${pids}, held ${held}`);
      // Given back, it is the first lane's again (or the other's; either is free).
      const both = await Promise.all([backend(lanes, 100), backend(lanes, 100)]);
      assert.equal(new Set(both).size, 2);
    });
  },
});

Deno.test({
  name: "lanes: with every connection held, a plain query waits for one to be given back",
  ignore,
  async fn() {
    await withLanes(1, async (lanes) => {
      const reservation = await lanes.reserve();
      let answered = false;
      const query = backend(lanes).then((pid) => {
        answered = true;
        return pid;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(answered, false);
      reservation.release();
      assert.equal(typeof await query, "number");
      // A second transaction gets the lane back.
      const again = await lanes.reserve();
      again.release();
    });
  },
});

Deno.test({
  name: "lanes: a transaction takes the first connection to have nothing in flight",
  ignore,
  async fn() {
    await withLanes(2, async (lanes) => {
      const slow = backend(lanes, 600);
      const quick = backend(lanes, 100);
      const started = performance.now();
      const reservation = await within(2000, lanes.reserve());
      const waited = performance.now() - started;
      try {
        const [{ pid }] = await reservation.sql.unsafe<{ pid: number }[]>(
          "select pg_backend_pid() as pid",
        );
        assert.equal(pid, await quick, "it took the lane whose query ended first");
        assert.ok(waited < 500, `it waited ${waited.toFixed(0)} ms, not for the slow query`);
      } finally {
        reservation.release();
      }
      await slow;
    });
  },
});
