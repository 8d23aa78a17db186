/**
 * The audit log: who changed what, when and from where. Entries are only ever added (with the
 * change, in its transaction: `server/procedures/audit.ts`) and read; nothing of the interface changes
 * or deletes one. They go past the retention (`AUDIT_RETENTION_DAYS`), pruned with the runner's
 * other history (`server/runner/prune.ts`).
 *
 * @module
 */
import type { AuditEntry, AuditListInput } from "@probe/shared";
import { CompiledQuery, sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { runLast } from "../storage/joined.ts";
import { decodeCursor, type Page, pageOf, rowsToRead } from "./pages.ts";

export const DEFAULT_AUDIT_RETENTION_DAYS = 400;

/** A change to record: everything of an entry but its id and time. */
export interface AuditRecord {
  actor: string;
  actorSource: string;
  address?: string | null;
  userAgent?: string | null;
  requestId?: string | null;
  operation: string;
  resourceType: string;
  resourceId: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** The entry's insert, written out: built once, not by Kysely at each change. */
const INSERT = `insert into audit_log (actor, actor_source, address, user_agent, request_id,
  operation, resource_type, resource_id, before, after)
  values ($1, $2, $3, $4, $5, $6, $7, $8, cast(cast($9 as text) as json),
  cast(cast($10 as text) as json))`;

/**
 * Adds the entry of a change; `db` is the change's transaction, so both commit or neither. In a
 * joined transaction (`server/procedures/audit.ts`) it runs last, with the commit (`runLast`).
 */
export async function recordChange(db: Db, entry: AuditRecord): Promise<void> {
  const text = (fields: Record<string, unknown> | null) =>
    fields === null ? null : JSON.stringify(fields);
  await runLast(
    db,
    CompiledQuery.raw(INSERT, [
      entry.actor,
      entry.actorSource,
      entry.address ?? null,
      entry.userAgent ?? null,
      entry.requestId ?? null,
      entry.operation,
      entry.resourceType,
      entry.resourceId,
      text(entry.before),
      text(entry.after),
    ]),
  );
}

/** A resource filter: a type (`probe`), or one resource (`probe:web/api-1a2b3c`). */
function resourceFilter(resource: string): { type: string; id?: string } {
  const colon = resource.indexOf(":");
  return colon < 0
    ? { type: resource }
    : { type: resource.slice(0, colon), id: resource.slice(colon + 1) };
}

/** Entries newest first, filtered, one page at a time (`limit`, `after`). */
export async function listAuditLog(
  { db, input }: { db: Db; input: AuditListInput },
): Promise<Page<AuditEntry>> {
  let query = db.selectFrom("audit_log").selectAll();
  if (input.actor !== undefined) query = query.where("actor", "=", input.actor);
  if (input.resource !== undefined) {
    const { type, id } = resourceFilter(input.resource);
    query = query.where("resource_type", "=", type);
    if (id !== undefined) query = query.where("resource_id", "=", id);
  }
  if (input.since !== undefined) query = query.where("at", ">=", new Date(input.since));
  if (input.before !== undefined) query = query.where("at", "<", new Date(input.before));
  if (input.after !== undefined) {
    const [after] = decodeCursor(input.after, 1);
    if (!/^[1-9][0-9]{0,18}$/.test(after)) decodeCursor("", 1);
    query = query.where("id", "<", after);
  }
  const rows = await query.orderBy("id", "desc").limit(rowsToRead(input)).execute();
  const entries = rows.map((row): AuditEntry => ({
    id: String(row.id),
    at: new Date(row.at).toISOString(),
    actor: row.actor,
    actor_source: row.actor_source,
    address: row.address,
    user_agent: row.user_agent,
    request_id: row.request_id,
    operation: row.operation,
    resource: { type: row.resource_type, id: row.resource_id },
    before: row.before,
    after: row.after,
  }));
  return pageOf(entries, input, (entry) => [entry.id], "entries");
}

/**
 * Removes the entries older than `before`, `batch` at a time, each batch its own statement;
 * returns how many went.
 */
export async function pruneAuditLog(
  db: Db,
  { before, batch = 1000 }: { before: Date; batch?: number },
): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await sql`
      delete from audit_log where id = any(array(
        select id from audit_log where at < ${before.toISOString()}
        limit ${batch} for update skip locked))`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    total += n;
    if (n < batch) return total;
  }
}
