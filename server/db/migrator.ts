import { sql } from "kysely";
import { type Migration, type MigrationResultSet, Migrator } from "kysely/migration";
import { migrations } from "../../migrations/mod.ts";
import type { Db } from "./database.ts";

/**
 * Brings the schema up to the newest migration; throws when one fails. Migrations run on one
 * connection without the statement timeout that bounds the service's own queries.
 */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const result = await db.connection().execute(async (conn) => {
    await sql`set statement_timeout = 0`.execute(conn);
    try {
      const migrator = new Migrator({
        db: conn,
        provider: { getMigrations: () => Promise.resolve<Record<string, Migration>>(migrations) },
      });
      return await migrator.migrateToLatest();
    } finally {
      await sql`reset statement_timeout`.execute(conn);
    }
  });
  if (result.error) {
    const failed = result.results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`Migration ${failed ?? "(unknown)"} failed`, { cause: result.error });
  }
  return result;
}
