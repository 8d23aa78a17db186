/**
 * The embedded database's own thread (`server/base/threads.ts`), holding the PGlite instance, so that
 * a long statement (archiving and deleting a project of 100,000 probes takes seconds) runs beside
 * the HTTP edge instead of stopping it. The server's side is `pglite_thread.ts`; the messages are
 * `WorkerRequest` and `WorkerReply` there.
 *
 * Each call is PGlite's own API, one to one: `query`, `transaction` (held open until the server's
 * side ends it), `close`. PGlite serialises them itself: a query sent while a transaction is open
 * waits for it, as it would in the server's thread.
 *
 * @module
 */
import { parentPort, resourceLimits } from "node:worker_threads";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import {
  embeddedStartParams,
  type SerializedError,
  type ThreadMemory,
  type WorkerReply,
  type WorkerRequest,
} from "./pglite_thread.ts";
import { ownHeap } from "../base/threads.ts";

let pglite: PGlite | undefined;
const transactions = new Map<number, { tx: Transaction; end: (commit: boolean) => void }>();
/**
 * Each transaction's BEGIN while it is under way: the server's side sends its first statement
 * (and possibly its end) right behind the BEGIN without waiting for it, and messages are handled
 * as they come, so these wait for it here.
 */
const begins = new Map<number, Promise<unknown>>();
/** Each transaction's settling, from its BEGIN to its COMMIT or ROLLBACK. */
const ended = new Map<number, Promise<void>>();
/** Rejects a transaction's callback so that PGlite rolls it back; not an error of its own. */
const ROLLBACK = Symbol("rollback");

/** What the server's side needs of an error: PGlite's fields (code, detail, constraint…). */
function serialize(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const fields: SerializedError = { name: error.name, message: error.message };
  for (const [key, value] of Object.entries(error)) {
    if (["string", "number", "boolean"].includes(typeof value)) fields[key] = value;
  }
  return fields;
}

async function handle(request: WorkerRequest): Promise<unknown> {
  switch (request.op) {
    case "open":
      pglite = await PGlite.create({
        dataDir: request.dataDir,
        loadDataDir: request.loadDataDir,
        startParams: embeddedStartParams(PGlite.defaultStartParams),
      });
      return null;
    case "query": {
      if (request.tx !== undefined) await begins.get(request.tx);
      const target = request.tx === undefined ? pglite! : transactions.get(request.tx)?.tx;
      if (!target) throw new Error("The transaction has ended");
      const { rows, affectedRows } = await target.query(request.sql, request.params, {
        rowMode: "object",
      });
      return { rows, affectedRows };
    }
    case "begin": {
      const begun = Promise.withResolvers<void>();
      const done = pglite!.transaction(async (tx) => {
        const ended = Promise.withResolvers<void>();
        transactions.set(request.tx, {
          tx,
          end: (commit) => commit ? ended.resolve() : ended.reject(ROLLBACK),
        });
        begun.resolve();
        await ended.promise;
      }).finally(() => transactions.delete(request.tx));
      ended.set(request.tx, done);
      const started = Promise.race([begun.promise, done]);
      begins.set(request.tx, started);
      try {
        await started;
      } catch (error) {
        ended.delete(request.tx); // a BEGIN that failed: nothing to end
        throw error;
      } finally {
        begins.delete(request.tx);
      }
      return null;
    }
    case "end": {
      await begins.get(request.tx)?.catch(() => {}); // a failed BEGIN is its own answer
      const open = transactions.get(request.tx);
      // What runs last (`PGliteThread.runLast`): a failure rolls back and is the answer.
      let failure: { error: unknown } | undefined;
      try {
        for (const { sql, params } of request.last ?? []) {
          if (!open) throw new Error("The transaction has ended");
          await open.tx.query(sql, [...params ?? []]);
        }
      } catch (error) {
        failure = { error };
      }
      const done = ended.get(request.tx);
      ended.delete(request.tx);
      open?.end(request.commit && !failure);
      try {
        await done;
      } catch (error) {
        if (error !== ROLLBACK) throw error;
      }
      if (failure) throw failure.error;
      return null;
    }
    case "memory": {
      const memory: ThreadMemory = {
        ...ownHeap(),
        wasmBytes: pglite?.Module.HEAPU8.byteLength ?? 0,
        youngGenerationMb: resourceLimits.maxYoungGenerationSizeMb ?? null,
      };
      return memory;
    }
    case "close":
      if (pglite && !pglite.closed) await pglite.close();
      return null;
  }
}

parentPort?.on("message", async (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    reply = { id: request.id, ok: true, value: await handle(request) };
  } catch (error) {
    reply = { id: request.id, ok: false, error: serialize(error) };
  }
  parentPort?.postMessage(reply);
});
