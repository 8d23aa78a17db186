/**
 * Loads a backup (`format.ts`) into an empty database, in one transaction: migrate to the
 * backup's schema version, load each table's rows in batches, set the identity sequences where
 * they stood, then migrate to the newest schema. Anything wrong (a cut-off backup, a row that
 * does not fit) rolls it all back and leaves the database as empty as it was.
 *
 * @module
 */
import { CompiledQuery, sql } from "kysely";
import { Migrator } from "kysely/migration";
import { migrations } from "../../../migrations/mod.ts";
import type { Db } from "../../storage/database.ts";
import { migrateToLatest } from "../../storage/migrator.ts";
import { recordChange } from "../../domain/audit_log.ts";
import { type CatalogTable, ident, readCatalog } from "./catalog.ts";
import {
  BackupError,
  type BackupHeader,
  type BackupLine,
  type RowLine,
  type SequenceLine,
} from "./format.ts";

/** Parameters in one INSERT at most (PostgreSQL allows 65,535). */
const BATCH_PARAMETERS = 20_000;
const BATCH_ROWS = 1000;
/** About how much text one INSERT carries at most. */
const BATCH_BYTES = 4 * 1024 * 1024;

export interface RestoreSummary {
  /** The schema version of the backup, and the migrations applied after loading it. */
  schema: string;
  migrated: string[];
  rows: Record<string, number>;
}

/** Refuses a database that holds any table, view or sequence in its schema. */
export async function assertEmptyDatabase(db: Db): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm', 'S')
    order by c.relname limit 5`.execute(db);
  if (rows.length > 0) {
    throw new BackupError(
      `The database is not empty (it holds ${rows.map((r) => r.name).join(", ")}…): ` +
        "a backup is restored into an empty database only",
    );
  }
}

/**
 * Restores the backup into `db`, which must be empty; returns what it loaded. The audit log
 * (restored with the rest) gains an entry of the restore, in its transaction, naming `operator`
 * (the command that ran it) when given.
 */
export async function restoreBackup(
  { db, backup, operator }: {
    db: Db;
    backup: AsyncIterable<BackupHeader | BackupLine>;
    operator?: string;
  },
): Promise<RestoreSummary> {
  await assertEmptyDatabase(db);
  const lines = backup[Symbol.asyncIterator]();
  try {
    return await load(db, lines, operator);
  } finally {
    // Ends the backup's reading however the restore ended (a dump in progress holds its
    // database's transaction until then).
    await lines.return?.();
  }
}

async function load(
  db: Db,
  lines: AsyncIterator<BackupHeader | BackupLine>,
  operator: string | undefined,
): Promise<RestoreSummary> {
  const first = await lines.next();
  if (first.done) throw new BackupError("The backup is empty");
  const header = first.value as BackupHeader;
  if (!Object.hasOwn(migrations, header.schema)) {
    throw new BackupError(
      `The backup's schema version ${header.schema} is not one this version of the service ` +
        "knows (was it made by a newer one?)",
    );
  }
  return await db.transaction().execute(async (trx) => {
    const migrator = new Migrator({
      db: trx,
      provider: { getMigrations: () => Promise.resolve(migrations) },
    });
    const migrated = await migrator.migrateTo(header.schema);
    if (migrated.error) {
      throw new Error(`Migrating to ${header.schema} failed`, { cause: migrated.error });
    }
    const catalog = new Map((await readCatalog(trx)).map((t) => [t.name, t]));
    // The migrations insert some rows of their own (default settings): the backup's replace them.
    for (const table of [...catalog.values()].reverse()) {
      await trx.executeQuery(CompiledQuery.raw(`delete from ${ident(table.name)}`));
    }

    const loaded: Record<string, number> = {};
    const sequences: SequenceLine[] = [];
    let loader: Loader | null = null;
    let end: Record<string, number> | null = null;
    for (let next = await lines.next(); !next.done; next = await lines.next()) {
      const value = next.value as BackupLine;
      if (end) throw new BackupError("The backup goes on after its last line");
      if (Array.isArray(value)) {
        if (!loader) throw new BackupError("The backup has a row before any table");
        await loader.add(value);
        continue;
      }
      await loader?.flush();
      loader = null;
      if ("table" in value) {
        const table = catalog.get(value.table);
        if (!table) {
          throw new BackupError(`The backup has a table ${value.table} the schema does not have`);
        }
        if (table.name in loaded) throw new BackupError(`The backup has ${table.name} twice`);
        loaded[table.name] = 0;
        loader = new Loader(trx, table, value.columns, loaded);
      } else if ("sequence" in value) sequences.push(value);
      else end = value.end.rows;
    }
    await loader?.flush();
    if (!end) {
      throw new BackupError(
        "The backup is incomplete: it ends before its last line (was it cut short?)",
      );
    }
    for (const [table, count] of Object.entries(end)) {
      if ((loaded[table] ?? 0) !== count) {
        throw new BackupError(
          `The backup says ${table} has ${count} rows, but it holds ${loaded[table] ?? 0}`,
        );
      }
    }
    for (const sequence of sequences) await setSequence(trx, catalog, sequence);
    const latest = await migrateToLatest(trx);
    const summary = {
      schema: header.schema,
      migrated: (latest.results ?? []).map((r) => r.migrationName),
      rows: loaded,
    };
    if (operator !== undefined) {
      await recordChange(trx, {
        actor: operator,
        actorSource: "operator",
        operation: "backup.restore",
        resourceType: "database",
        resourceId: "",
        before: null,
        after: { schema: summary.schema, rows: summary.rows },
      });
    }
    return summary;
  });
}

/** Puts an identity column's sequence where the backup had it (and past every key loaded). */
async function setSequence(
  db: Db,
  catalog: Map<string, CatalogTable>,
  { sequence: { table, column }, last_value, is_called }: SequenceLine,
): Promise<void> {
  const name = catalog.get(table)?.columns.find((c) => c.name === column)?.sequence;
  if (!name) throw new BackupError(`The backup has a sequence of ${table}.${column}, unknown here`);
  if (!/^-?\d+$/.test(last_value)) {
    throw new BackupError(`The sequence of ${table}.${column} has no whole number`);
  }
  const { rows } = await db.executeQuery<{ max: string | null }>(CompiledQuery.raw(
    `select max(${ident(column)})::text as max from ${ident(table)}`,
  ));
  const max = rows[0]?.max;
  const [value, called] = max !== null && max !== undefined && BigInt(max) > BigInt(last_value)
    ? [max, true]
    : [last_value, is_called];
  // The sequence's name comes from the catalog (pg_get_serial_sequence quotes it).
  await db.executeQuery(CompiledQuery.raw(
    `select setval('${name.replaceAll("'", "''")}', cast(cast($1 as text) as bigint), $2)`,
    [value, called],
  ));
}

/** Inserts one table's rows in batches of one INSERT each. */
class Loader {
  readonly #db: Db;
  readonly #table: CatalogTable;
  readonly #columns: { name: string; type: string }[];
  readonly #loaded: Record<string, number>;
  readonly #perBatch: number;
  #rows: RowLine[] = [];
  #bytes = 0;

  constructor(db: Db, table: CatalogTable, columns: string[], loaded: Record<string, number>) {
    this.#db = db;
    this.#table = table;
    this.#loaded = loaded;
    this.#columns = columns.map((name) => {
      const column = table.columns.find((c) => c.name === name);
      if (!column) {
        throw new BackupError(`The backup has a column ${table.name}.${name} the schema does not`);
      }
      return column;
    });
    if (new Set(columns).size !== columns.length) {
      throw new BackupError(`The backup names a column of ${table.name} twice`);
    }
    this.#perBatch = Math.max(
      1,
      Math.min(BATCH_ROWS, Math.floor(BATCH_PARAMETERS / Math.max(1, columns.length))),
    );
  }

  async add(row: RowLine): Promise<void> {
    if (row.length !== this.#columns.length) {
      throw new BackupError(
        `A row of ${this.#table.name} has ${row.length} values for ${this.#columns.length} columns`,
      );
    }
    this.#rows.push(row);
    for (const value of row) this.#bytes += value?.length ?? 0;
    if (this.#rows.length >= this.#perBatch || this.#bytes >= BATCH_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.#rows.length === 0) return;
    const params: unknown[] = [];
    const tuples = this.#rows.map((row) =>
      `(${
        row.map((value, i) => {
          params.push(value);
          return `cast(cast($${params.length} as text) as ${this.#columns[i].type})`;
        }).join(", ")
      })`
    );
    const columns = this.#columns.map((c) => ident(c.name)).join(", ");
    // OVERRIDING SYSTEM VALUE: identity columns keep the keys the backup has.
    await this.#db.executeQuery(CompiledQuery.raw(
      `insert into ${ident(this.#table.name)} (${columns}) overriding system value ` +
        `values ${tuples.join(", ")}`,
      params,
    ));
    this.#loaded[this.#table.name] += this.#rows.length;
    this.#rows = [];
    this.#bytes = 0;
  }
}
