/**
 * Test support for backups: a database with no tables to restore into, and a backup's text as
 * the stream a restore reads.
 *
 * @module
 */
import { type DatabaseHandle, openDatabase } from "../storage/database.ts";
import { type Backend, createPostgresDatabase, openDropping } from "./app.ts";

/** A database with no tables at all: PGlite in memory, or a new PostgreSQL database. */
export async function emptyDatabase(backend: Backend): Promise<DatabaseHandle> {
  if (backend === "pglite") return await openDatabase({ kind: "pglite" });
  return await openDropping(await createPostgresDatabase());
}

/** A backup's text in uneven pieces, as a network would give it. */
export async function* pieces(text: string): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += 4093) yield text.slice(i, i + 4093);
}
