/**
 * The net under postgres.js's null-socket write: the real fault, made through
 * postgres.js's public API on PostgreSQL, is logged and the process goes on.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { createLogger } from "../base/log.ts";
import { createPostgresDatabase } from "../testing/app.ts";
import { isDatabaseClientFault, surviveDatabaseClientFaults } from "./client_faults.ts";

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("only errors thrown from postgres.js's own code are its faults", () => {
  const thrownAt = (frame: string) => {
    const error = new TypeError("Cannot read properties of null (reading 'write')");
    error.stack = `TypeError: Cannot read properties of null (reading 'write')\n    at ${frame}`;
    return error;
  };
  for (
    const frame of [
      "Immediate.nextWrite (file:///root/.cache/deno/npm/registry.npmjs.org/postgres/3.4.9/src/connection.js:255:22)",
      "Immediate.nextWrite (/srv/app/node_modules/postgres/src/connection.js:255:22)",
      "nextWrite (/srv/app/node_modules/postgres/cjs/src/connection.js:255:22)",
    ]
  ) {
    assert.equal(isDatabaseClientFault(thrownAt(frame)), true, frame);
  }
  for (
    const frame of [
      "handler (file:///work/server/edge/handler.ts:10:5)",
      "x (file:///srv/node_modules/postgres-array/index.js:3:1)",
      "y (file:///srv/postgres/src/main.ts:3:1)",
    ]
  ) {
    assert.equal(isDatabaseClientFault(thrownAt(frame)), false, frame);
  }
  assert.equal(isDatabaseClientFault("text"), false);
  assert.equal(isDatabaseClientFault(null), false);
  assert.equal(
    isDatabaseClientFault(new Error("no frames in postgres/src/connection.js:1")),
    false,
  );
});

Deno.test({
  name: "postgres.js writing on a closed connection is logged, and the process and pool go on " +
    "[postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const lines: string[] = [];
    const faults = surviveDatabaseClientFaults(createLogger("info", (line) => lines.push(line)));
    const sql = postgres(url, { max: 2, onnotice: () => {} });
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    try {
      // A reserved connection whose backend goes while a query waits on it (as when the
      // service ends a connection at a deadline, or the server restarts) ...
      const reserved = await sql.reserve();
      const [{ pid }] = await reserved`select pg_backend_pid() as pid`;
      const waiting = reserved`select pg_sleep(5)`.then(() => null, (e) => e);
      await tick(100);
      await admin`select pg_terminate_backend(${pid})`;
      assert.ok(await waiting, "the query on it fails");
      await tick(100);
      // ... is given another query, as a transaction's rollback was: postgres.js writes it from
      // a setImmediate on a null socket, and throws there.
      reserved`select 1`.catch(() => {});
      await tick(200);
      assert.equal(faults.count(), 1, lines.join("\n"));
      const logged = lines.map((l) => JSON.parse(l));
      assert.deepEqual(
        logged.map((l) => [l.level, l.msg, l.error]),
        [[
          "error",
          "database client fault: the process goes on",
          "Cannot read properties of null (reading 'write')",
        ]],
      );
      // The pool serves on.
      const [{ one }] = await sql`select 1 as one`;
      assert.equal(one, 1);
    } finally {
      faults.remove();
      await sql.end({ timeout: 1 });
      await admin.end();
      await drop();
    }
  },
});
