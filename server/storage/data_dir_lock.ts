/**
 * One process per embedded database. PGlite is PostgreSQL in one process with no shared memory
 * between processes: two servers on one `DATA_DIR` each run their own PostgreSQL on the same
 * files, and one's writes are lost to the other's. So a server on the embedded database holds an
 * exclusive lock on a file in `DATA_DIR` (an advisory `flock`, through `Deno.FsFile.tryLock`)
 * from before PGlite opens until after it closes, and a second one stops at once, naming the
 * process that holds it.
 *
 * The operating system releases the lock when the process ends, however it ends: a crashed
 * server leaves no stale lock behind, only its pid in the file, which the next start replaces.
 *
 * @module
 */

/** The lock file, in `DATA_DIR`. */
export const LOCK_FILE = "server.lock";

/** Another process holds `DATA_DIR`; the message names both. */
export class DataDirInUseError extends Error {
  override name = "DataDirInUseError";
  constructor(readonly dataDir: string, readonly pid: number | null) {
    super(
      `DATA_DIR ${dataDir} is in use by another process (pid ${pid ?? "unknown"}); ` +
        "the embedded database allows one process at a time",
    );
  }
}

export interface DataDirLock {
  readonly path: string;
  /** Releases the lock (once the database is closed). */
  release(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Takes the exclusive lock on `dataDir` (which must exist) and writes this process's pid into
 * the lock file. Throws DataDirInUseError, without waiting, when another holder has it: another
 * process, or another open of the same lock in this one.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const path = `${dataDir}/${LOCK_FILE}`;
  // Not truncated on open: the holder's pid must stay readable to the one refused.
  const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o644 });
  let locked = false;
  try {
    locked = await file.tryLock(true);
    if (!locked) throw new DataDirInUseError(dataDir, await holderPid(path));
    await file.truncate(0);
    await file.write(new TextEncoder().encode(`${Deno.pid}\n`));
  } catch (error) {
    if (locked) await file.unlock().catch(() => {});
    file.close();
    throw error;
  }
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    try {
      await file.truncate(0);
      await file.unlock();
    } finally {
      file.close();
    }
  };
  return { path, release, [Symbol.asyncDispose]: release };
}

async function holderPid(path: string): Promise<number | null> {
  try {
    const text = (await Deno.readTextFile(path)).trim();
    return /^\d+$/.test(text) ? Number(text) : null;
  } catch {
    return null;
  }
}
