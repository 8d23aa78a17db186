/**
 * What a backup reads of the database's own catalog: the service's tables (those of the current
 * schema but Kysely's migration bookkeeping), their columns and types, primary keys, identity
 * sequences, and the order their foreign keys allow loading them in. Read from PostgreSQL's
 * catalog rather than listed here, so that a new migration's tables are backed up without a
 * change to this code.
 *
 * @module
 */
import { type Kysely, sql } from "kysely";

/** Kysely's migration tables: a restore recreates them by migrating. */
const MIGRATION_TABLES = ["kysely_migration", "kysely_migration_lock"];

export interface CatalogColumn {
  name: string;
  /** As `format_type` writes it: `bigint`, `timestamp with time zone`, `integer[]`… */
  type: string;
  /** The identity (or serial) sequence behind the column, if any. */
  sequence: string | null;
}

export interface CatalogTable {
  name: string;
  columns: CatalogColumn[];
  /** The primary key's columns, in the key's order: backups page by it. */
  primaryKey: string[];
  /** The tables its foreign keys name (itself excepted). */
  parents: string[];
}

/** Any Kysely database or transaction: the catalog is read with raw SQL. */
// deno-lint-ignore no-explicit-any
type AnyDb = Kysely<any>;

/** The service's tables, parents before children (then by name). */
export async function readCatalog(db: AnyDb): Promise<CatalogTable[]> {
  const columns = await sql<{ table: string; name: string; type: string; sequence: string | null }>`
    select c.relname as table, a.attname as name,
           format_type(a.atttypid, a.atttypmod) as type,
           pg_get_serial_sequence(quote_ident(c.relname), a.attname) as sequence
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
      and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
    order by c.relname, a.attnum`.execute(db);
  const keys = await sql<{ table: string; name: string }>`
    select c.relname as table, a.attname as name
    from pg_index i
    join pg_class c on c.oid = i.indrelid
    join pg_namespace n on n.oid = c.relnamespace
    cross join lateral unnest(i.indkey::int2[]) with ordinality as k(attnum, position)
    join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
    where i.indisprimary and n.nspname = current_schema()
    order by c.relname, k.position`.execute(db);
  const references = await sql<{ table: string; parent: string }>`
    select c.relname as table, p.relname as parent
    from pg_constraint f
    join pg_class c on c.oid = f.conrelid
    join pg_class p on p.oid = f.confrelid
    join pg_namespace n on n.oid = c.relnamespace
    where f.contype = 'f' and n.nspname = current_schema()`.execute(db);

  const tables = new Map<string, CatalogTable>();
  for (const { table, name, type, sequence } of columns.rows) {
    if (MIGRATION_TABLES.includes(table)) continue;
    let entry = tables.get(table);
    if (!entry) {
      tables.set(table, entry = { name: table, columns: [], primaryKey: [], parents: [] });
    }
    entry.columns.push({ name, type, sequence });
  }
  for (const { table, name } of keys.rows) tables.get(table)?.primaryKey.push(name);
  for (const { table, parent } of references.rows) {
    const entry = tables.get(table);
    if (entry && parent !== table && !entry.parents.includes(parent)) entry.parents.push(parent);
  }
  for (const table of tables.values()) {
    if (table.primaryKey.length === 0) {
      // Pages are read by primary key; every table of the service has one.
      throw new Error(`Table ${table.name} has no primary key: it cannot be backed up`);
    }
  }
  return loadOrder([...tables.values()]);
}

/** Parents before children, by name among equals; a cycle of foreign keys is refused. */
function loadOrder(tables: CatalogTable[]): CatalogTable[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const ordered: CatalogTable[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (table: CatalogTable) => {
    const seen = state.get(table.name);
    if (seen === "done") return;
    if (seen === "visiting") throw new Error(`Foreign keys form a cycle at ${table.name}`);
    state.set(table.name, "visiting");
    for (const parent of [...table.parents].sort()) {
      const found = byName.get(parent);
      if (found) visit(found);
    }
    state.set(table.name, "done");
    ordered.push(table);
  };
  for (const table of [...tables].sort((a, b) => a.name < b.name ? -1 : 1)) visit(table);
  return ordered;
}

/** An identifier, quoted for SQL. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
