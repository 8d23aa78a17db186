/** `deno task migrate`: brings the configured database to the newest migration. */
import { databaseTarget } from "./database.ts";
import { parseConfig } from "../base/config.ts";
import { openDatabase } from "./database.ts";
import { DataDirInUseError, lockDataDir } from "./data_dir_lock.ts";
import { migrateToLatest } from "./migrator.ts";

const config = parseConfig(Deno.env.toObject());
let lock;
if (!config.databaseUrl) {
  // The embedded database is one process's at a time: not beside a running server.
  await Deno.mkdir(config.dataDir, { recursive: true });
  try {
    lock = await lockDataDir(config.dataDir);
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    console.error(error.message);
    Deno.exit(1);
  }
}
const handle = await openDatabase(databaseTarget(config));
try {
  const { results } = await migrateToLatest(handle.db);
  for (const r of results ?? []) console.log(`${r.status}: ${r.migrationName}`);
  if (!results?.length) console.log("The database is up to date");
} finally {
  await handle.close();
  await lock?.release();
}
