/**
 * The backup commands (docs/backups.md):
 *
 * - `deno task backup [--output FILE]`: asks the running service for a backup (`GET /backup`)
 *   and writes it to FILE as it arrives (gzip when FILE ends in `.gz`).
 * - `deno task restore FILE [--data-dir DIR | --database-url URL]`: loads a backup into a new,
 *   empty `DATA_DIR` or an empty PostgreSQL database.
 * - `deno task move-to-postgres [--database-url URL]`: copies a stopped embedded instance's
 *   `DATA_DIR` into an empty PostgreSQL database, with no file in between.
 *
 * Without the options, the variables the service reads: `DATA_DIR`, `DATABASE_URL`,
 * `PROBE_SERVICE_URL` and `SERVICE_API_KEY` (else `DATA_DIR/api-key`), as the CLI does.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { dataDirOf, noApiKeyMessage, operatorApiKey, serviceUrlOf } from "@probe/shared";
import { type DatabaseHandle, type Db, openDatabase } from "../../storage/database.ts";
import {
  DataDirInUseError,
  type DataDirLock,
  LOCK_FILE,
  lockDataDir,
} from "../../storage/data_dir_lock.ts";
import { dumpBackup } from "./dump.ts";
import { BACKUP_PATH } from "./endpoint.ts";
import { BackupError, backupText, readBackup } from "./format.ts";
import { restoreBackup, type RestoreSummary } from "./restore.ts";

const USAGE = `Usage:
  deno task backup [--output FILE] [--url URL] [--api-key KEY]
  deno task restore FILE [--data-dir DIR | --database-url URL]
  deno task move-to-postgres [--database-url URL]`;

/** A mistake of the caller's or a refusal: one line, exit status 1. */
class CommandError extends Error {}

type Env = Record<string, string | undefined>;

async function backup(args: string[], env: Env): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      output: { type: "string", short: "o" },
      url: { type: "string" },
      "api-key": { type: "string" },
    },
  });
  const base = serviceUrlOf(values.url, env).replace(/\/+$/, "");
  const key = values["api-key"] || await operatorApiKey(env, Deno.readTextFile);
  if (!key) throw new CommandError(noApiKeyMessage(env));
  const stamp = new Date().toISOString().replaceAll(":", "").replace(/\.\d+Z$/, "Z");
  const output = values.output || `probe-backup-${stamp}.jsonl`;

  const response = await fetch(`${base}${BACKUP_PATH}`, {
    headers: { "x-service-api-key": key },
  }).catch((error) => {
    throw new CommandError(`Cannot reach the service at ${base}: ${error.message}`);
  });
  if (!response.ok || !response.body) {
    const body = await response.json().catch(() => null);
    const message = body?.error?.message ?? response.statusText;
    throw new CommandError(`The service answered ${response.status}: ${message}`);
  }
  // Written beside the output and renamed when whole: a cut-off backup never takes its name.
  const partial = `${output}.partial`;
  const file = await Deno.open(partial, { write: true, create: true, truncate: true, mode: 0o600 });
  let tail: Uint8Array = new Uint8Array(0);
  let bytes = 0;
  const watch = new TransformStream<Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>>({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      // The last line is short (the row counts); keep enough of the end to read it.
      const joined = new Uint8Array(tail.byteLength + chunk.byteLength);
      joined.set(tail);
      joined.set(chunk, tail.byteLength);
      tail = joined.slice(Math.max(0, joined.byteLength - 65_536));
      controller.enqueue(chunk);
    },
  });
  let stream = response.body.pipeThrough(watch);
  if (output.endsWith(".gz")) stream = stream.pipeThrough(new CompressionStream("gzip"));
  try {
    await stream.pipeTo(file.writable);
  } catch (error) {
    await Deno.remove(partial).catch(() => {});
    throw new CommandError(
      `The backup was cut off after ${bytes} bytes: ${(error as Error).message}`,
    );
  }
  const last = new TextDecoder().decode(tail).trimEnd().split("\n").at(-1) ?? "";
  let rows: Record<string, number> | undefined;
  try {
    rows = JSON.parse(last)?.end?.rows;
  } catch { /* reported below */ }
  if (!rows) {
    await Deno.remove(partial).catch(() => {});
    throw new CommandError(`The backup was cut off after ${bytes} bytes (no last line)`);
  }
  await Deno.rename(partial, output);
  // The size on disk; a .gz file also says what it holds uncompressed.
  const written = (await Deno.stat(output)).size;
  const size = output.endsWith(".gz")
    ? `${written} bytes, ${bytes} uncompressed`
    : `${written} bytes`;
  console.log(`Backup written to ${output} (${size}): ${describeRows(rows)}`);
}

async function restore(args: string[], env: Env): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { "data-dir": { type: "string" }, "database-url": { type: "string" } },
  });
  if (positionals.length !== 1) throw new CommandError(`Name one backup file\n${USAGE}`);
  const [path] = positionals;
  if (values["data-dir"] && values["database-url"]) {
    throw new CommandError("Give --data-dir or --database-url, not both");
  }
  const file = await Deno.open(path).catch(() => {
    throw new CommandError(`Cannot open ${path}`);
  });
  const source = readBackup(backupText(file.readable));
  const url = values["database-url"] ?? (values["data-dir"] ? undefined : env.DATABASE_URL);
  const restoreInto = (db: Db) =>
    restoreBackup({ db, backup: source, operator: "operator (deno task restore)" });
  const summary = url
    ? await intoPostgres(url, restoreInto)
    : await intoNewDataDir(values["data-dir"] || dataDirOf(env), restoreInto);
  report(
    summary,
    url ? "PostgreSQL" : `DATA_DIR ${values["data-dir"] || dataDirOf(env)}`,
  );
  console.log(
    "The API key is not part of a backup: start with SERVICE_API_KEY set to the old key, or " +
      "copy the old DATA_DIR/api-key into DATA_DIR (else a new key is made on first start).",
  );
}

async function moveToPostgres(args: string[], env: Env): Promise<void> {
  const { values } = parseArgs({ args, options: { "database-url": { type: "string" } } });
  const url = values["database-url"] || env.DATABASE_URL;
  if (!url) throw new CommandError("Name the PostgreSQL database: --database-url or DATABASE_URL");
  const dataDir = dataDirOf(env);
  try {
    await Deno.stat(`${dataDir}/pgdata`);
  } catch {
    throw new CommandError(`DATA_DIR ${dataDir} holds no embedded database (no pgdata)`);
  }
  // The instance must be stopped: the lock refuses while its server runs.
  const lock = await takeLock(dataDir);
  let embedded: DatabaseHandle | undefined;
  try {
    embedded = await openDatabase({ kind: "pglite", dataDir: `${dataDir}/pgdata` });
    const source = readBackup(dumpBackup({ db: embedded.db, kind: "pglite", exclusive: true }));
    const summary = await intoPostgres(
      url,
      (db) =>
        restoreBackup({ db, backup: source, operator: "operator (deno task move-to-postgres)" }),
    );
    report(summary, "PostgreSQL");
  } finally {
    await embedded?.close();
    await lock.release();
  }
  console.log(
    `Start the service with DATABASE_URL set. Its API key stays in ${dataDir}/api-key, which ` +
      "the service reads while DATA_DIR is the same; elsewhere set SERVICE_API_KEY to it. " +
      `${dataDir}/pgdata is left as it was: remove it once the service runs on PostgreSQL.`,
  );
}

async function intoPostgres(
  url: string,
  load: (db: DatabaseHandle["db"]) => Promise<RestoreSummary>,
): Promise<RestoreSummary> {
  const handle = await openDatabase({ kind: "postgres", url, poolSize: 1 });
  try {
    return await load(handle.db);
  } finally {
    await handle.close();
  }
}

/** Loads into a new `DATA_DIR` under its lock; a failure leaves it empty again. */
async function intoNewDataDir(
  dataDir: string,
  load: (db: DatabaseHandle["db"]) => Promise<RestoreSummary>,
): Promise<RestoreSummary> {
  await Deno.mkdir(dataDir, { recursive: true });
  const lock = await takeLock(dataDir);
  try {
    const held = [];
    for await (const entry of Deno.readDir(dataDir)) {
      if (entry.name !== LOCK_FILE) held.push(entry.name);
    }
    if (held.length > 0) {
      throw new CommandError(
        `DATA_DIR ${dataDir} is not empty (it holds ${held.sort().join(", ")}): ` +
          "restore into a new, empty DATA_DIR",
      );
    }
    const pgdata = `${dataDir}/pgdata`;
    let handle: DatabaseHandle | undefined;
    try {
      handle = await openDatabase({ kind: "pglite", dataDir: pgdata });
      const summary = await load(handle.db);
      await handle.close();
      return summary;
    } catch (error) {
      await handle?.close().catch(() => {});
      await Deno.remove(pgdata, { recursive: true }).catch(() => {});
      throw error;
    }
  } finally {
    await lock.release();
  }
}

async function takeLock(dataDir: string): Promise<DataDirLock> {
  try {
    return await lockDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirInUseError) throw new CommandError(error.message);
    throw error;
  }
}

function describeRows(rows: Record<string, number>): string {
  const shown = ["projects", "probes", "probe_results", "incidents", "notification_targets"];
  return shown.filter((t) => t in rows).map((t) => `${t} ${rows[t]}`).join(", ");
}

function report(summary: RestoreSummary, into: string): void {
  const migrated = summary.migrated.length ? `, then migrated ${summary.migrated.join(", ")}` : "";
  console.log(
    `Restored into ${into} (schema ${summary.schema}${migrated}): ${describeRows(summary.rows)}`,
  );
}

const COMMANDS: Record<string, (args: string[], env: Env) => Promise<void>> = {
  backup,
  restore,
  "move-to-postgres": moveToPostgres,
};

if (import.meta.main) {
  const [name, ...args] = Deno.args;
  const command = COMMANDS[name ?? ""];
  if (!command) {
    console.error(USAGE);
    Deno.exit(2);
  }
  try {
    await command(args, Deno.env.toObject());
    Deno.exit(0);
  } catch (error) {
    if (error instanceof CommandError || error instanceof BackupError) {
      console.error(error.message);
      Deno.exit(1);
    }
    if (
      error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE")
    ) {
      console.error(`${error.message}\n${USAGE}`);
      Deno.exit(2);
    }
    throw error;
  }
}
