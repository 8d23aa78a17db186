/**
 * Test support for backups: a database with no tables to restore into, and a backup's text as
 * the stream a restore reads.
 *
 * @module
 */
import type { DatabaseHandle } from "../storage/database.ts";
import { type Backend, freshDatabase } from "./app.ts";

/**
 * A database with no tables at all: PGlite in memory (loaded from a kept dump, as PGlite's initdb
 * costs seconds), or a new PostgreSQL database.
 */
export function emptyDatabase(backend: Backend): Promise<DatabaseHandle> {
  return freshDatabase(backend, { migratedTo: null });
}

/** A backup's text in uneven pieces, as a network would give it. */
export async function* pieces(text: string): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += 4093) yield text.slice(i, i + 4093);
}
