/**
 * `deno run … drop_databases.ts ADMIN_URL NAME…`: drops the named databases of the server at
 * ADMIN_URL, for a test module's end (`app.ts`), where nothing asynchronous may run.
 *
 * @module
 */
import postgres from "postgres";

if (import.meta.main) {
  const [adminUrl, ...names] = Deno.args;
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    for (const name of names) {
      if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not a test database's name: ${name}`);
      await sql.unsafe(`drop database if exists ${name} with (force)`);
    }
  } finally {
    await sql.end();
  }
}
