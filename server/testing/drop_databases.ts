/**
 * Dropping test databases. Run as `deno run … drop_databases.ts ADMIN_URL NAME…` at a test
 * module's end (`reused_databases.ts`), where nothing asynchronous may run; it imports postgres.js
 * alone so that this start costs little.
 *
 * @module
 */
import postgres from "postgres";

/** Drops the named databases of the server at `adminUrl`, ending any connection still on them. */
export async function dropDatabases(adminUrl: string, names: string[]): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    for (const name of names) await sql.unsafe(`drop database if exists ${name} with (force)`);
  } finally {
    await sql.end();
  }
}

if (import.meta.main) {
  const [adminUrl, ...names] = Deno.args;
  const wrong = names.find((name) => !/^[a-z0-9_]+$/.test(name));
  if (wrong !== undefined) throw new Error(`not a test database's name: ${wrong}`);
  await dropDatabases(adminUrl, names);
}
