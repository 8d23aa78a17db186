/**
 * A new embedded database starts from a copy of the data folder PGlite's initdb makes, kept
 * beside this module (`pglite_template.tar.br`, written by `deno task pglite-template`), rather
 * than from PGlite's initdb: that runs two more WebAssembly instances and a copy of one's whole
 * memory, so a first start peaked near 700 MiB for a minute, against some 300 for a restart.
 * The copy is the folder PGlite itself would have made (same version, same initdb), so
 * PGlite opens it as a database it made earlier.
 *
 * The archive is a tar (as PGlite's `dumpDataDir` writes it) compressed with brotli, unpacked
 * as it streams, so that no more than a chunk of it is in memory at once.
 *
 * @module
 */
import { serverFile } from "../base/files.ts";

/** The data folder of a new database, made by the PGlite version in the import map. */
export const TEMPLATE = serverFile("storage/pglite_template.tar.br");

const BLOCK = 512;

/**
 * Creates the database at `dataDir` (which must not exist, or be empty) from the template:
 * unpacked into a folder beside it, then renamed into place, so that a start that stops halfway
 * leaves no half-made database to open next time.
 */
export async function restoreTemplate(dataDir: string, template: URL = TEMPLATE): Promise<void> {
  const staging = `${dataDir}.new`;
  await Deno.remove(staging, { recursive: true }).catch(ignoreNotFound);
  await Deno.mkdir(staging, { recursive: true });
  const file = await Deno.open(template);
  const bytes = new Bytes(file.readable.pipeThrough(new DecompressionStream("brotli")));
  try {
    for (;;) {
      const header = await bytes.exactly(BLOCK);
      if (header === null || header.every((byte) => byte === 0)) break;
      const { path, type, size } = parseHeader(header);
      const target = `${staging}/${path}`;
      // Written synchronously: a thousand small files, each an async open, write and close
      // through the thread pool, took 18 s on a loaded machine against 1 s; nothing else runs
      // yet at this point of a start.
      if (type === "5") {
        Deno.mkdirSync(target, { recursive: true });
      } else if (type === "0" || type === "\0") {
        Deno.mkdirSync(target.slice(0, target.lastIndexOf("/")), { recursive: true });
        using out = Deno.openSync(target, { write: true, create: true, truncate: true });
        await bytes.copy(size, out);
      } else {
        throw new Error(`The database template holds an entry of type ${type} (${path})`);
      }
      await bytes.skip((BLOCK - size % BLOCK) % BLOCK);
    }
  } finally {
    await bytes.cancel();
  }
  // Removes an empty folder (a DATA_DIR made by hand); one with files in it is not a new
  // database, and stays as it is.
  await Deno.remove(dataDir).catch(ignoreNotFound);
  await Deno.rename(staging, dataDir);
}

/** A tar header's path (relative, `..` refused), type flag and size. */
function parseHeader(header: Uint8Array): { path: string; type: string; size: number } {
  const text = (from: number, length: number) => {
    const field = header.subarray(from, from + length);
    const end = field.indexOf(0);
    return new TextDecoder().decode(end === -1 ? field : field.subarray(0, end));
  };
  const prefix = text(345, 155);
  const name = (prefix ? `${prefix}/` : "") + text(0, 100);
  const parts = name.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) throw new Error(`The database template names a path outside: ${name}`);
  const size = parseInt(text(124, 12).trim() || "0", 8);
  if (!Number.isSafeInteger(size)) throw new Error(`The database template is damaged (${name})`);
  return { path: parts.join("/"), type: text(156, 1) || "\0", size };
}

/** Bytes read from a stream by count, across its chunks. */
class Bytes {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #chunk: Uint8Array = new Uint8Array(0);
  #done = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** The next chunk's bytes (up to `max`), or null at the end of the stream. */
  async #next(max: number): Promise<Uint8Array | null> {
    while (this.#chunk.length === 0) {
      if (this.#done) return null;
      const { value, done } = await this.#reader.read();
      if (done) this.#done = true;
      else this.#chunk = value;
    }
    const taken = this.#chunk.subarray(0, max);
    this.#chunk = this.#chunk.subarray(taken.length);
    return taken;
  }

  /** Exactly `count` bytes; null at the end of the stream (a tar may end without its zeros). */
  async exactly(count: number): Promise<Uint8Array | null> {
    const out = new Uint8Array(count);
    let filled = 0;
    while (filled < count) {
      const part = await this.#next(count - filled);
      if (part === null) {
        if (filled === 0) return null;
        throw new Error("The database template ends inside an entry");
      }
      out.set(part, filled);
      filled += part.length;
    }
    return out;
  }

  /** Writes the next `count` bytes to `out`, a chunk at a time. */
  async copy(count: number, out: Deno.FsFile): Promise<void> {
    while (count > 0) {
      const part = await this.#next(count);
      if (part === null) throw new Error("The database template ends inside a file");
      for (let written = 0; written < part.length;) {
        written += out.writeSync(part.subarray(written));
      }
      count -= part.length;
    }
  }

  async skip(count: number): Promise<void> {
    while (count > 0) {
      const part = await this.#next(count);
      if (part === null) return;
      count -= part.length;
    }
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

function ignoreNotFound(error: unknown): void {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
}
