import { type RawBuilder, sql } from "kysely";

/**
 * A value for a `json` column. Sent as text and cast on the server, because postgres.js would
 * encode a string parameter again once it learns the column is json, while PGlite would not.
 */
export function json<T>(value: T): RawBuilder<string> {
  return sql<string>`cast(cast(${JSON.stringify(value)} as text) as json)`;
}
