/**
 * Writes a backup (`format.ts`) of a live database, a page at a time.
 *
 * Consistency: on PostgreSQL the whole backup is read in one `repeatable read, read only`
 * transaction, so it is the database as it was at one instant, and nothing waits for it. The
 * embedded database (PGlite) is one session: a transaction there holds every other query until
 * it ends (see `server/storage/pglite_thread.ts`). So there the backup reads everything but the
 * history tables (`HISTORY`) in one transaction, spooled to a temporary file so that a slow
 * reader does not prolong it, and then the history tables page by page in short queries, each
 * up to the bound the transaction saw (rows added after it are left out; rows pruned meanwhile
 * are missing, as they would be after the pruner anyway). See docs/backups.md.
 *
 * @module
 */
import { CompiledQuery, type Kysely, sql } from "kysely";
import { type CatalogTable, ident, readCatalog } from "./catalog.ts";
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  type BackupHeader,
  line,
  type RowLine,
  type SequenceLine,
} from "./format.ts";

// deno-lint-ignore no-explicit-any
type AnyDb = Kysely<any>;

/**
 * Tables that only grow with history (rows are added, and pruned when old), by the column
 * that bounds them: on the embedded database they are read after the transaction, in short
 * queries, up to the largest value of that column the transaction saw. `probe_rollups` rows of
 * the current hour may so count runs made while the backup was read.
 */
export const HISTORY: Readonly<Record<string, string>> = {
  probe_results: "id",
  probe_rollups: "probe_key",
  notification_attempts: "id",
  iam_alive_deliveries: "id",
};

/** The most rows one page reads; pages shrink when rows are large (`PAGE_BYTES`). */
const PAGE_ROWS = 1000;
/** About how much text one page should hold. */
const PAGE_BYTES = 2 * 1024 * 1024;

export interface DumpOptions {
  db: AnyDb;
  kind: "pglite" | "postgres";
  /**
   * Nothing else uses the database (a stopped instance's `DATA_DIR`, under its lock): read it
   * all in one transaction and stream it, with no temporary file, on either kind.
   */
  exclusive?: boolean;
  now?: () => Date;
}

/** A backup of the database, as text chunks of whole lines; read it to the end or stop early. */
export async function* dumpBackup(
  { db, kind, exclusive = false, now = () => new Date() }: DumpOptions,
): AsyncGenerator<string> {
  const snapshot = await db.startTransaction().setIsolationLevel("repeatable read")
    .setAccessMode("read only").execute();
  let open = true;
  const end = async () => {
    if (!open) return;
    open = false;
    await snapshot.commit().execute();
  };
  let spool: Spool | undefined;
  try {
    const catalog = await readCatalog(snapshot);
    const referenced = new Set(catalog.flatMap((t) => t.parents));
    // A history table another table refers to is read in the snapshot, or children could be
    // loaded before their parents.
    const history = catalog.filter((t) => t.name in HISTORY && !referenced.has(t.name));
    const snapshotTables = catalog.filter((t) => !history.includes(t));
    const schema = await sql<{ name: string | null }>`
      select max(name) as name from kysely_migration`.execute(snapshot);
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      schema: schema.rows[0]?.name ?? "",
      database: kind,
      taken_at: now().toISOString(),
    };
    const sequences = await readSequences(snapshot, catalog);
    const bounds = new Map<string, string | null>();
    for (const table of history) {
      const column = HISTORY[table.name];
      const max = await snapshot.executeQuery<{ max: string | null }>(CompiledQuery.raw(
        `select max(${ident(column)})::text as max from ${ident(table.name)}`,
      ));
      bounds.set(table.name, max.rows[0]?.max ?? null);
    }
    const counts: Record<string, number> = {};

    // Short queries after the snapshot only where a long transaction would hold up the rest.
    const apart = kind === "pglite" && !exclusive;
    if (apart) {
      spool = await Spool.create();
      await spool.write(line(header));
      for (const table of snapshotTables) {
        for await (const chunk of tableLines(snapshot, table, null, counts)) {
          await spool.write(chunk);
        }
      }
      await end();
      yield* spool.read();
    } else {
      yield line(header);
      for (const table of snapshotTables) yield* tableLines(snapshot, table, null, counts);
    }
    for (const table of history) {
      const bound = { column: HISTORY[table.name], value: bounds.get(table.name) ?? null };
      yield* tableLines(apart ? db : snapshot, table, bound, counts);
    }
    yield sequences.map(line).join("");
    yield line({ end: { rows: counts } });
    await end();
  } finally {
    if (open) {
      open = false;
      await snapshot.rollback().execute().catch(() => {});
    }
    await spool?.remove();
  }
}

/** Where each identity column's sequence stands. */
async function readSequences(db: AnyDb, catalog: CatalogTable[]): Promise<SequenceLine[]> {
  const lines: SequenceLine[] = [];
  for (const table of catalog) {
    for (const column of table.columns) {
      if (!column.sequence) continue;
      // The sequence's name comes from the catalog (pg_get_serial_sequence quotes it).
      const { rows } = await db.executeQuery<{ last_value: string; is_called: boolean }>(
        CompiledQuery.raw(
          `select last_value::text as last_value, is_called from ${column.sequence}`,
        ),
      );
      const { last_value, is_called } = rows[0];
      lines.push({ sequence: { table: table.name, column: column.name }, last_value, is_called });
    }
  }
  return lines;
}

/** Text to cast a parameter to a column's type (sent as text: see `server/storage/json.ts`). */
const cast = (placeholder: string, type: string) => `cast(cast(${placeholder} as text) as ${type})`;

/**
 * A table's line and its rows, read by primary key a page at a time (each page starts after the
 * last key of the one before), and at most up to `bound` when given.
 */
async function* tableLines(
  db: AnyDb,
  table: CatalogTable,
  bound: { column: string; value: string | null } | null,
  counts: Record<string, number>,
): AsyncGenerator<string> {
  const names = table.columns.map((c) => c.name);
  yield line({ table: table.name, columns: names, types: table.columns.map((c) => c.type) });
  counts[table.name] = 0;
  if (bound && bound.value === null) return; // the table was empty in the snapshot
  const typeOf = (name: string) => table.columns.find((c) => c.name === name)!.type;
  const keyIndexes = table.primaryKey.map((k) => names.indexOf(k));
  // Named apart from the columns: ORDER BY a column's own name would sort its text.
  const select = table.columns.map((c, i) => `${ident(c.name)}::text as c${i}`).join(", ");
  const key = table.primaryKey.map(ident).join(", ");
  let after: (string | null)[] | null = null;
  let limit = PAGE_ROWS;
  for (;;) {
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const where: string[] = [];
    if (after) {
      const last = table.primaryKey.map((k, i) => cast(param(after![i]), typeOf(k)));
      where.push(`(${key}) > (${last.join(", ")})`);
    }
    if (bound) {
      where.push(`${ident(bound.column)} <= ${cast(param(bound.value), typeOf(bound.column))}`);
    }
    const query = `select ${select} from ${ident(table.name)}` +
      (where.length ? ` where ${where.join(" and ")}` : "") +
      ` order by ${key} limit ${limit}`;
    const { rows } = await db.executeQuery<Record<string, string | null>>(
      CompiledQuery.raw(query, params),
    );
    if (rows.length === 0) return;
    let text = "";
    for (const row of rows) text += line(names.map((_, i) => row[`c${i}`]) as RowLine);
    counts[table.name] += rows.length;
    const last = rows[rows.length - 1];
    after = keyIndexes.map((i) => last[`c${i}`]);
    yield text;
    if (rows.length < limit) return;
    // Large rows (archived projects' snapshots) make smaller pages, small rows larger ones.
    limit = Math.max(1, Math.min(PAGE_ROWS, Math.floor(limit * PAGE_BYTES / text.length)));
  }
}

/** A temporary file (mode 0600: a backup holds secrets) the snapshot is written to. */
class Spool {
  private constructor(
    readonly path: string,
    private readonly writer: WritableStreamDefaultWriter<Uint8Array>,
  ) {}
  static async create(): Promise<Spool> {
    const path = await Deno.makeTempFile({ prefix: "probe-backup-", suffix: ".jsonl" });
    await Deno.chmod(path, 0o600);
    const file = await Deno.open(path, { write: true, truncate: true });
    return new Spool(path, file.writable.getWriter());
  }
  #encoder = new TextEncoder();
  #closed = false;
  async write(text: string): Promise<void> {
    await this.writer.write(this.#encoder.encode(text));
  }
  async *read(): AsyncGenerator<string> {
    await this.#close();
    const file = await Deno.open(this.path, { read: true });
    yield* file.readable.pipeThrough(new TextDecoderStream());
  }
  async #close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.writer.close();
  }
  async remove(): Promise<void> {
    await this.#close().catch(() => {});
    await Deno.remove(this.path).catch(() => {});
  }
}
