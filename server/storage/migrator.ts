import { sql } from "kysely";
import { type Migration, type MigrationResultSet, Migrator } from "kysely/migration";
import { migrations } from "../../migrations/mod.ts";
import { type Db, withBudget } from "./database.ts";
import { maintainPartitions } from "./partitions.ts";

/**
 * Each migration, run without the statement timeout that bounds the service's own queries.
 * Kysely runs migrations inside one transaction on PostgreSQL, so SET LOCAL lasts for it.
 */
const untimed: Record<string, Migration> = Object.fromEntries(
  Object.entries(migrations).map(([name, migration]) => [name, {
    up: async (db) => {
      await sql`set local statement_timeout = 0`.execute(db);
      await migration.up(db);
    },
    ...(migration.down && {
      down: async (db) => {
        await sql`set local statement_timeout = 0`.execute(db);
        await migration.down!(db);
      },
    }),
  }]),
);

/**
 * Brings the schema up to the newest migration; throws when one fails. On PostgreSQL it runs on
 * the connection kept for migrations, with their budget (`BUDGETS.migrations`) rather than a
 * request's deadline: it may wait for another process's migrations, and a migration may be long.
 */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const budgeted = withBudget(db, "migrations");
  const result = await upToDate(budgeted) ? { results: [] } : await new Migrator({
    db: budgeted,
    provider: { getMigrations: () => Promise.resolve(untimed) },
  }).migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`Migration ${failed ?? "(unknown)"} failed`, { cause: result.error });
  }
  // The partitions of raw results for today and the days ahead. Left to the runner's prune
  // loop when this cannot get its locks now: until then rows go to the default partition.
  await maintainPartitions(db, { now: Date.now() }).catch(() => {});
  return result;
}

/**
 * Whether every migration, and no other, is recorded as run. Two small reads: Kysely's migrator
 * first reads the catalogs for its tables and takes its lock (a few tenths of a second on a new
 * embedded database), which a database already up to date, as at most starts, does not need.
 * Anything else (no table yet, a migration missing or unknown) goes through the migrator.
 */
async function upToDate(db: Db): Promise<boolean> {
  const { rows: [table] } = await sql<{ found: boolean }>`
    select to_regclass('kysely_migration') is not null as found`.execute(db);
  if (!table?.found) return false;
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  const recorded = new Set(rows.map((row) => row.name));
  const names = Object.keys(untimed);
  return recorded.size === names.length && names.every((name) => recorded.has(name));
}
