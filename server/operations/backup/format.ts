/**
 * The backup format: JSON lines (UTF-8, one JSON value per line), self-describing, written and
 * read a page at a time so that neither side holds the whole backup.
 *
 * ```text
 * {"format":"probe-backup","version":1,"schema":"2026_11_22_110000_…","database":"pglite","taken_at":"…"}
 * {"table":"projects","columns":["name","label",…],"types":["text","text",…]}
 * ["shop",null,…]                      one line per row: each value PostgreSQL's text form, or null
 * {"sequence":{"table":"probes","column":"key"},"last_value":"42","is_called":true}
 * {"end":{"rows":{"projects":1,…}}}   the last line: without it the backup is incomplete
 * ```
 *
 * Tables come in an order that loads (a table after those its foreign keys name); `schema` is
 * the newest migration of the database backed up, which a restore migrates to before loading.
 * Documented in docs/backups.md.
 *
 * @module
 */

export const BACKUP_FORMAT = "probe-backup";
export const BACKUP_VERSION = 1;

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  /** The newest migration applied to the database backed up. */
  schema: string;
  database: "pglite" | "postgres";
  taken_at: string;
}

/** Starts a table: the rows that follow, up to the next object line, are its. */
export interface TableLine {
  table: string;
  columns: string[];
  /** Each column's type (`format_type`), for a reader; a restore takes the target's own. */
  types: string[];
}

/** A row: each column's value in PostgreSQL's text form (what `::text` gives), or null. */
export type RowLine = (string | null)[];

/** Where an identity column's sequence stood, so that new rows get new keys after a restore. */
export interface SequenceLine {
  sequence: { table: string; column: string };
  last_value: string;
  is_called: boolean;
}

/** The last line: how many rows each table has in the backup. */
export interface EndLine {
  end: { rows: Record<string, number> };
}

export type BackupLine = TableLine | RowLine | SequenceLine | EndLine;

/** A backup that cannot be read or restored; the message says why (never a value it holds). */
export class BackupError extends Error {
  override name = "BackupError";
}

/** One line of the format, with its newline. */
export function line(value: BackupHeader | BackupLine): string {
  return `${JSON.stringify(value)}\n`;
}

/** Splits text chunks into lines (without their newline); a last line without one is kept. */
export async function* splitLines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let rest = "";
  for await (const chunk of chunks) {
    rest += chunk;
    let start = 0;
    for (let end = rest.indexOf("\n"); end !== -1; end = rest.indexOf("\n", start)) {
      yield rest.slice(start, end);
      start = end + 1;
    }
    rest = rest.slice(start);
  }
  if (rest) yield rest;
}

/**
 * The text of a backup as it is stored: gzip (`1f 8b`, as `--output x.gz` writes it) is
 * uncompressed; anything else is read as UTF-8.
 */
export async function* backupText(
  bytes: ReadableStream<Uint8Array<ArrayBuffer>>,
): AsyncGenerator<string> {
  const reader = bytes.getReader();
  const first = await reader.read();
  if (first.done) return;
  const gzip = first.value[0] === 0x1f && first.value[1] === 0x8b;
  // The first chunk was read to look at; the stream goes on from it.
  const replayed = new ReadableStream<Uint8Array<ArrayBuffer>>({
    start: (controller) => controller.enqueue(first.value),
    pull: async (controller) => {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const plain = gzip ? replayed.pipeThrough(new DecompressionStream("gzip")) : replayed;
  yield* plain.pipeThrough(new TextDecoderStream());
}

/**
 * Reads a backup's lines: its header first, then each line parsed and checked for its shape.
 * Throws BackupError for anything that is not this format.
 */
export async function* readBackup(
  text: AsyncIterable<string>,
): AsyncGenerator<BackupHeader | BackupLine> {
  let number = 0;
  for await (const raw of splitLines(text)) {
    number++;
    if (!raw.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new BackupError(`Line ${number} of the backup is not JSON`);
    }
    if (number === 1) {
      yield header(value);
      continue;
    }
    if (!isBackupLine(value)) {
      throw new BackupError(`Line ${number} of the backup is not a line of this format`);
    }
    yield value;
  }
  if (number === 0) throw new BackupError("The backup is empty");
}

function header(value: unknown): BackupHeader {
  const h = value as Partial<BackupHeader> | null;
  if (typeof h !== "object" || h === null || h.format !== BACKUP_FORMAT) {
    throw new BackupError(`This is not a backup of this service (no "${BACKUP_FORMAT}" header)`);
  }
  if (h.version !== BACKUP_VERSION) {
    throw new BackupError(
      `The backup is of format version ${h.version}; this service reads version ${BACKUP_VERSION}`,
    );
  }
  if (typeof h.schema !== "string" || !h.schema) {
    throw new BackupError("The backup's header names no schema version");
  }
  return h as BackupHeader;
}

const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((s) => typeof s === "string");

function isBackupLine(value: unknown): value is BackupLine {
  if (Array.isArray(value)) return value.every((v) => v === null || typeof v === "string");
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  if ("table" in v) {
    return typeof v.table === "string" && isStringArray(v.columns) && isStringArray(v.types);
  }
  if ("sequence" in v) {
    const s = v.sequence as Record<string, unknown> | null;
    return typeof s === "object" && s !== null && typeof s.table === "string" &&
      typeof s.column === "string" && typeof v.last_value === "string" &&
      typeof v.is_called === "boolean";
  }
  if ("end" in v) {
    const e = v.end as Record<string, unknown> | null;
    return typeof e === "object" && e !== null && typeof e.rows === "object" && e.rows !== null;
  }
  return false;
}
