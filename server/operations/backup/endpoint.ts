/**
 * `GET /backup`: a backup of the running service's database (`dump.ts`), streamed as it is
 * read. Only an admin key gets one: a backup holds notification targets' secrets.
 *
 * @module
 */
import type { Db } from "../../storage/database.ts";
import { apiError, isUnexpected, toApiError } from "../../procedures/errors.ts";
import { errorAnswer } from "../../edge/answers.ts";
import type { KeyedEndpoint } from "../../edge/edge_types.ts";
import { errorFields, type Logger } from "../../base/log.ts";
import { dumpBackup } from "./dump.ts";

export const BACKUP_PATH = "/backup";

/** The endpoint, for `HttpDeps.keyed`. */
export function createBackupEndpoint(
  { db, kind, log, now = () => new Date() }: {
    db: Db;
    kind: "pglite" | "postgres";
    log: Logger;
    now?: () => Date;
  },
): KeyedEndpoint {
  return {
    path: BACKUP_PATH,
    async handle(request, _url, scope, principal) {
      if (request.method !== "GET") {
        return errorAnswer(apiError("method_not_allowed"), { allow: "GET" });
      }
      if (scope !== "write") {
        return errorAnswer(
          apiError("forbidden", "A backup holds secrets: it needs a key that may write"),
        );
      }
      if (principal.role !== "admin") {
        return errorAnswer(apiError("forbidden", "A backup holds secrets: it needs an admin key"));
      }
      if (principal.projects !== null) {
        // Every project is in it: a key limited to some may not see the others.
        return errorAnswer(
          apiError("forbidden", "A backup holds every project: it needs a key that sees them all"),
        );
      }
      const taken = now();
      const chunks = dumpBackup({ db, kind, now: () => taken });
      // The first line is read before answering, so that a database that is down answers 503
      // (or whatever the error contract says) instead of a backup cut off at once.
      let first;
      try {
        first = await chunks.next();
      } catch (error) {
        const failure = toApiError(error);
        if (isUnexpected(failure)) log.error("backup failed", errorFields(error));
        else log.warn("backup failed", { error: errorFields(error).error });
        return errorAnswer(failure);
      }
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          if (!first.done) controller.enqueue(encoder.encode(first.value));
        },
        async pull(controller) {
          try {
            const next = await chunks.next();
            if (next.done) controller.close();
            else controller.enqueue(encoder.encode(next.value));
          } catch (error) {
            // Cut off: the reader sees a backup without its last line, which a restore refuses.
            log.error("backup failed", errorFields(error));
            controller.error(error);
          }
        },
        async cancel() {
          await chunks.return(undefined);
        },
      }, { highWaterMark: 1 });
      const stamp = taken.toISOString().replaceAll(":", "").replace(/\.\d+Z$/, "Z");
      return new Response(body, {
        headers: {
          "content-type": "application/jsonl; charset=utf-8",
          "content-disposition": `attachment; filename="probe-backup-${stamp}.jsonl"`,
          // Streamed by the connection layer as it is read (server/edge/serve.ts).
          "transfer-encoding": "chunked",
        },
      });
    },
  };
}
