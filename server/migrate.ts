/** `deno task migrate`: brings the configured database to the newest migration. */
import { databaseTarget } from "./app.ts";
import { parseConfig } from "./config.ts";
import { openDatabase } from "./db/database.ts";
import { migrateToLatest } from "./db/migrator.ts";

const config = parseConfig(Deno.env.toObject());
if (!config.databaseUrl) await Deno.mkdir(config.dataDir, { recursive: true });
const handle = await openDatabase(databaseTarget(config));
try {
  const { results } = await migrateToLatest(handle.db);
  for (const r of results ?? []) console.log(`${r.status}: ${r.migrationName}`);
  if (!results?.length) console.log("The database is up to date");
} finally {
  await handle.close();
}
