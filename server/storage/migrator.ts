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
  const migrator = new Migrator({
    db: withBudget(db, "migrations"),
    provider: { getMigrations: () => Promise.resolve(untimed) },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`Migration ${failed ?? "(unknown)"} failed`, { cause: result.error });
  }
  // The partitions of raw results for today and the days ahead. Left to the runner's prune
  // loop when this cannot get its locks now: until then rows go to the default partition.
  await maintainPartitions(db, { now: Date.now() }).catch(() => {});
  return result;
}
