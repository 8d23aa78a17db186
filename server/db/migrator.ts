import { type Migration, type MigrationResultSet, Migrator } from "kysely/migration";
import { migrations } from "../../migrations/mod.ts";
import type { Db } from "./database.ts";

/** Brings the schema up to the newest migration; throws when one fails. */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve<Record<string, Migration>>(migrations) },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`Migration ${failed ?? "(unknown)"} failed`, { cause: result.error });
  }
  return result;
}
