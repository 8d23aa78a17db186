/**
 * The lanes' choice of connection, on PostgreSQL (TEST_DATABASE_URL; skipped without it): each
 * query's backend tells which lane's connection ran it.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { Lanes, type Reservation } from "./lanes.ts";
import { createPostgresDatabase } from "../testing/app.ts";

const ignore = !Deno.env.get("TEST_DATABASE_URL");

/** A test of `count` lanes over a database of its own, dropped after it. */
function lanesTest(name: string, count: number, test: (lanes: Lanes) => Promise<void>): void {
  Deno.test({
    name: `lanes: ${name}`,
    ignore,
    async fn() {
      const database = await createPostgresDatabase();
      const lanes = new Lanes(count, () => postgres(database.url, { max: 1, onnotice: () => {} }));
      try {
        await test(lanes);
      } finally {
        await lanes.end();
        await database.drop();
      }
    },
  });
}

/** The backend that answers a plain query, which waits `ms` on the server first. */
async function backend(lanes: Lanes, ms = 0): Promise<number> {
  const [row] = await lanes.unsafe<{ pid: number }[]>(
    "select pg_backend_pid() as pid, pg_sleep($1::float8 / 1000)",
    [ms],
  );
  return row.pid;
}

/** The backend of a transaction's connection. */
async function heldBackend(reservation: Reservation): Promise<number> {
  const [row] = await reservation.sql.unsafe<{ pid: number }[]>("select pg_backend_pid() as pid");
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

lanesTest(
  "one query at a time stays on the first connection; queries at once spread",
  3,
  async (lanes) => {
    const first = await backend(lanes);
    for (let i = 0; i < 5; i++) assert.equal(await backend(lanes), first);
    const together = await Promise.all([
      backend(lanes, 200),
      backend(lanes, 200),
      backend(lanes, 200),
    ]);
    assert.equal(new Set(together).size, 3, `three at once ran on ${together}`);
    assert.equal(together[0], first);
  },
);

lanesTest(
  "a query goes to the connection with the fewest in flight, pipelined there",
  2,
  async (lanes) => {
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
  },
);

lanesTest(
  "a transaction's connection takes no plain query while another lane is free",
  2,
  async (lanes) => {
    const reservation = await lanes.reserve();
    const held = await heldBackend(reservation);
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
  },
);

lanesTest(
  "with every connection held, a plain query waits for one to be given back",
  1,
  async (lanes) => {
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
  },
);

lanesTest(
  "a transaction takes the first connection to have nothing in flight",
  2,
  async (lanes) => {
    const slow = backend(lanes, 2000);
    let slowEnded = false;
    slow.then(() => slowEnded = true, () => {});
    const quick = backend(lanes, 100);
    const reservation = await within(4000, lanes.reserve());
    // Whether it waited for the slow query, by what ended first rather than by a clock: a busy
    // machine may take more than the queries' difference to hand the lane over.
    const waitedForSlow = slowEnded;
    try {
      assert.equal(
        await heldBackend(reservation),
        await quick,
        "it took the lane whose query ended first",
      );
      assert.equal(waitedForSlow, false, "it waited for the slow query");
    } finally {
      reservation.release();
    }
    await slow;
  },
);
