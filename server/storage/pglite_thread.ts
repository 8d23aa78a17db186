/**
 * The embedded database in a thread of its own. PGlite runs PostgreSQL compiled to WebAssembly
 * in the thread that calls it, and a statement holds that thread until it ends: in the server's
 * thread, deleting a project of 100,000 probes stopped the HTTP edge (`/healthz` included) for
 * as long as it took. Here PGlite lives in a worker thread (`pglite_worker.ts`, started by
 * `server/base/threads.ts` with its young generation capped) and this side passes it each call; the
 * server's thread only waits for answers.
 *
 * `PGliteThread` offers what Kysely's `PGliteDialect` uses of a PGlite instance (`query`,
 * `transaction`, `close`, `closed`, `ready`, `waitReady`: Kysely's `PGlite` interface), so the
 * rest of the service does not know where the database runs. Errors keep PGlite's fields
 * (`code`, `detail`, `constraint`…), which is all the service reads of them.
 *
 * PGlite's own worker (`@electric-sql/pglite/worker`) is made for browser tabs sharing one
 * database: it passes errors on with their message alone (no SQLSTATE, so a unique violation
 * could not be told from a defect), logs each one from the worker, and terminates the worker
 * on close without closing the database. Hence this small protocol of our own.
 *
 * @module
 */

import type { Worker } from "node:worker_threads";
import { startThread, type ThreadHeap } from "../base/threads.ts";
import { threadEntry } from "../base/files.ts";
import { restoreTemplate } from "./pglite_template.ts";

/**
 * The PostgreSQL settings the embedded database starts with, on top of PGlite's own
 * (`PGlite.defaultStartParams`), given as PGlite's documented `startParams` (the command line of
 * PostgreSQL's single-user mode; they take precedence over `postgresql.conf`).
 *
 * PGlite's memory is one WebAssembly memory that can only grow, and every page of it PostgreSQL
 * has once touched stays resident for the life of the process. PostgreSQL's defaults, sized for
 * a server of its own, made that 155 MiB of the server's RSS at rest: `shared_buffers` alone
 * (128 MB, with its share of `wal_buffers`) is allocated and touched at start. The embedded
 * database reads its files through the operating system, whose page cache keeps them near
 * whatever this cache holds, so a small cache costs a copy per page instead of a disk read, and
 * each MB of it is a MiB resident: 4 MB (512 pages). With 1,000 probes that held RSS 4–6 MiB lower
 * than 8 MB did, and the database's thread took the same CPU for their results and for pings.
 * `maintenance_work_mem` bounds what index builds (migrations) and VACUUM may take at once;
 * `work_mem` (4 MB, PostgreSQL's default) each sort or hash. See docs/performance.md, "Memory".
 */
export const EMBEDDED_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: "4MB",
  maintenance_work_mem: "16MB",
  work_mem: "4MB",
  temp_buffers: "1MB",
};

/**
 * PGlite's start parameters (`PGlite.defaultStartParams`, passed in by the thread that loads
 * PGlite: the server's own thread never does) with {@link EMBEDDED_SETTINGS}.
 */
export function embeddedStartParams(defaults: readonly string[]): string[] {
  return [
    ...defaults,
    ...Object.entries(EMBEDDED_SETTINGS).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
  ];
}

/** A call to the worker: one of PGlite's, with an id to match its reply. */
export type WorkerRequest =
  & { id: number }
  & (
    | { op: "open"; dataDir?: string; loadDataDir?: Blob }
    | { op: "query"; sql: string; params?: unknown[]; tx?: number }
    | { op: "begin"; tx: number }
    | { op: "end"; tx: number; commit: boolean; last?: Statement[] }
    | { op: "memory" }
    | { op: "close" }
  );

/** A statement with its parameters, to run in the worker. */
export interface Statement {
  sql: string;
  params?: readonly unknown[];
}

/** The thread's memory (`PGliteThread.memory`), for `/metrics`. */
export interface ThreadMemory extends ThreadHeap {
  /** PGlite's WebAssembly memory: it only grows. */
  wasmBytes: number;
  /** The cap on its young generation (`server/base/threads.ts`), as V8 applies it. */
  youngGenerationMb: number | null;
}

/** A call without its id, which `PGliteThread` gives it. */
type Op = WorkerRequest extends infer R ? R extends unknown ? Omit<R, "id"> : never : never;

/** An error's message and its own plain fields (PGlite's `code`, `detail`, `constraint`…). */
export type SerializedError =
  & { name: string; message: string }
  & Record<
    string,
    string | number | boolean
  >;

export type WorkerReply =
  & { id: number }
  & ({ ok: true; value: unknown } | { ok: false; error: SerializedError });

/** An error the embedded database raised in its thread, with PGlite's fields on it. */
export class EmbeddedDatabaseError extends Error {
  [field: string]: unknown;
  constructor({ name, message, ...fields }: SerializedError) {
    super(message);
    Object.assign(this, fields);
    this.name = name === "Error" ? "EmbeddedDatabaseError" : name;
  }
}

interface QueryResults<T> {
  rows: T[];
  affectedRows?: number;
  fields: { name: string; dataTypeID: number }[];
}

interface Call {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** A transaction open in the worker, as Kysely's dialect uses it. */
interface ThreadTransaction {
  query<T>(sql: string, params?: unknown[]): Promise<QueryResults<T>>;
  rollback(): Promise<void>;
}

/** PGlite in a worker thread, behind the part of PGlite's API that Kysely uses. */
export class PGliteThread {
  readonly #worker: Worker;
  readonly #calls = new Map<number, Call>();
  #nextId = 1;
  #nextTx = 1;
  /** The transactions under way, each with what runs last in it (`runLast`). */
  readonly #open = new Set<{ last: Statement[] }>();
  #closed = false;
  #failure: Error | undefined;
  readonly waitReady = Promise.resolve();
  readonly ready = true;

  private constructor() {
    this.#worker = startThread(threadEntry("storage/pglite_worker.ts"));
    this.#worker.on("message", (reply: WorkerReply) => {
      const call = this.#calls.get(reply.id);
      if (!call) return;
      this.#calls.delete(reply.id);
      if (reply.ok) call.resolve(reply.value);
      else call.reject(new EmbeddedDatabaseError(reply.error));
    });
    this.#worker.on("error", (error: Error) => {
      // Not PGlite failing a query (that is a reply) but the thread itself: nothing more can
      // be asked of it. Handled here, so that it does not end the whole process.
      this.#fail(new Error(`The embedded database's thread failed: ${error.message}`));
    });
  }

  /**
   * Starts the worker and opens PGlite in it, on `dataDir` (or in memory). A `dataDir` that does
   * not exist yet, or is empty, first gets a new database from the template
   * (`pglite_template.ts`) instead of PGlite's initdb, which peaks at some 400 MiB more.
   */
  static async open(
    options: { dataDir?: string; loadDataDir?: Blob } = {},
  ): Promise<PGliteThread> {
    const { dataDir, loadDataDir } = options;
    if (dataDir !== undefined && !loadDataDir && await isEmpty(dataDir)) {
      await restoreTemplate(dataDir);
    }
    return await PGliteThread.#start(options);
  }

  static async #start(
    options: { dataDir?: string; loadDataDir?: Blob },
  ): Promise<PGliteThread> {
    const thread = new PGliteThread();
    try {
      await thread.#call({ op: "open", ...options });
    } catch (error) {
      await thread.#worker.terminate();
      throw error;
    }
    return thread;
  }

  get closed(): boolean {
    return this.#closed;
  }

  query<T>(sql: string, params?: unknown[]): Promise<QueryResults<T>> {
    return this.#call({ op: "query", sql, params }) as Promise<QueryResults<T>>;
  }

  memory(): Promise<ThreadMemory> {
    return this.#call({ op: "memory" }) as Promise<ThreadMemory>;
  }

  /**
   * Runs `callback` in a transaction: committed when it resolves, rolled back when it rejects.
   * Other queries wait for it (PGlite's exclusive transaction, in the worker).
   */
  async transaction<T>(callback: (tx: ThreadTransaction) => Promise<T>): Promise<T> {
    const tx = this.#nextTx++;
    // Not waited for: the first statement follows it in the next message, and the thread has it
    // wait for the BEGIN (a round trip fewer a transaction). A failed BEGIN fails that statement
    // and the end, and is thrown below.
    const begun = this.#call({ op: "begin", tx });
    begun.catch(() => {});
    let open = true;
    const state = { last: [] as Statement[] };
    this.#open.add(state);
    const end = async (commit: boolean) => {
      if (!open) return;
      open = false;
      this.#open.delete(state);
      const last = commit && state.last.length > 0 ? state.last : undefined;
      await this.#call({ op: "end", tx, commit, last });
      await begun;
    };
    let result: T;
    try {
      result = await callback({
        query: <R>(sql: string, params?: unknown[]) => {
          if (!open) return Promise.reject(new Error("The transaction has ended"));
          return this.#call({ op: "query", sql, params, tx }) as Promise<QueryResults<R>>;
        },
        rollback: () => end(false),
      });
    } catch (error) {
      await end(false).catch(() => {});
      throw error;
    }
    await end(true);
    return result;
  }

  /**
   * Has `statements` run last in the transaction under way, in the message that commits it: one
   * round trip to the thread fewer each. Their failure rolls the transaction back and is what
   * its commit answers. False, and nothing done, unless exactly one transaction is under way
   * (Kysely's dialect opens one at a time): the caller then runs them itself.
   */
  runLast(statements: readonly Statement[]): boolean {
    if (this.#open.size !== 1) return false;
    for (const state of this.#open) state.last.push(...statements);
    return true;
  }

  /** Closes PGlite (so that it ends as cleanly as in the server's thread), then the worker. */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      if (!this.#failure) await this.#call({ op: "close" });
    } finally {
      this.#closed = true;
      await this.#worker.terminate();
      this.#fail(new Error("The embedded database is closed"));
    }
  }

  #call(request: Op): Promise<unknown> {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      this.#worker.postMessage({ ...request, id } as WorkerRequest);
    });
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const call of this.#calls.values()) call.reject(this.#failure);
    this.#calls.clear();
  }
}

/** Whether `path` is a folder with nothing in it, or nothing at all. */
async function isEmpty(path: string): Promise<boolean> {
  try {
    for await (const _ of Deno.readDir(path)) return false;
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return true;
    throw error;
  }
}
