/**
 * Every change through the API leaves an audit entry, in the change's own transaction: the one seam
 * every interface passes through (REST, `/trpc` and its fast path, the dashboard, the CLI and the
 * client all call the procedures) is the `audited` step each mutation runs once its input is
 * validated (`init.ts`), which hands the call here. The transaction is opened here and the
 * procedure gets it as its `ctx.db` (`inJoinedTransaction`: the domain's own transactions join it,
 * and what they tell others of their change waits for its commit); the resource is read before and
 * after as a viewer would see it through its own query (secrets masked by the API's own rules), or
 * the domain function that query calls (its rule's `load`), or as the write handed it over
 * (`stored`, `joined.ts`: its RETURNING, no read; its rule `tells`), and the entry is written
 * before the commit. A procedure that fails, or a failure after the entry, rolls both back: a
 * refused write (401, 403, 404, 422, 409) leaves no entry.
 *
 * @module
 */
import { toApiError } from "./errors.ts";
import type { Db } from "../storage/database.ts";
import { withBudget } from "../storage/database.ts";
import { inJoinedTransaction, storedIn } from "../storage/joined.ts";
import { type AuditRecord, recordChange } from "../domain/audit_log.ts";
import type { Principal } from "../domain/principal.ts";
import { AUDIT_RULES, type AuditRule, type ResourceRef } from "./audit_rules.ts";
import { createProcedureCaller } from "./caller.ts";
import type { AuditCall, Auditor, Context, StepResult } from "./context.ts";
import type { AppRouter } from "./router.ts";

type Fields = Record<string, unknown>;

/** Who reads a resource for its entry: a viewer of every project, so secrets are masked. */
const AUDIT_READER: Principal = {
  source: "configured_key",
  name: "audit",
  role: "viewer",
  projects: null,
};

/** Written for a secret field: changed, never shown. */
export const REDACTED = "<redacted>";
export const CHANGED = "<changed>";

const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Thrown inside the transaction to roll it back when the procedure failed. */
class Refused extends Error {}

/** The fields of `before` and `after` that differ, each side keeping its own. */
function changed(before: Fields, after: Fields): { before: Fields; after: Fields } {
  const was: Fields = {};
  const now: Fields = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
    if (key in before) was[key] = before[key];
    if (key in after) now[key] = after[key];
  }
  return { before: was, after: now };
}

/**
 * A field written that no read shows (a webhook's secret), or that reads the same masked
 * before and after though another value was sent (a secret header, a URL's token): changed,
 * not shown.
 */
function markWritten(
  input: Fields,
  ref: ResourceRef | null,
  before: Fields | null,
  after: Fields | null,
  change: { before: Fields | null; after: Fields | null },
): void {
  for (const [key, sent] of Object.entries(input)) {
    if (ref !== null && key in ref) continue;
    const hidden = after === null || !(key in after);
    const masked = before !== null && after !== null && key in after && !(key in change.after!) &&
      JSON.stringify(after[key]) !== JSON.stringify(sent);
    if (hidden || masked) {
      change.after![key] = CHANGED;
      if (masked && change.before !== null) change.before[key] = before![key];
    }
  }
}

function masked(rule: AuditRule, fields: Fields | null): Fields | null {
  if (fields === null || !rule.secrets) return fields;
  const copy = { ...fields };
  for (const name of rule.secrets) if (copy[name] != null) copy[name] = REDACTED;
  return copy;
}

/** The auditor of `router`'s mutations (`AUDIT_RULES`); unknown ones are recorded bare. */
export function createAuditor(router: AppRouter): Auditor {
  const call = createProcedureCaller(router);

  /** The resource as a viewer reads it in `db`; null when it is not there (or unreadable). */
  async function read(ctx: Context, db: Db, rule: AuditRule, ref: ResourceRef | null) {
    if (!rule.read || ref === null) return null;
    const reader: Context = {
      ...ctx,
      db,
      scope: "read",
      principal: rule.readAs ? { ...AUDIT_READER, role: rule.readAs } : AUDIT_READER,
      res: {},
      answerBudget: undefined,
      answerLimit: undefined,
    };
    try {
      let data: unknown;
      if (rule.load) data = await rule.load(reader, ref);
      else {
        // A list read (`pick`) takes the project alone.
        const answer = await call(
          reader,
          rule.read.split("."),
          rule.pick ? { project: ref.project } : ref,
        );
        data = isFields(answer) ? answer.data : undefined;
      }
      if (rule.pick) data = rule.pick(data, ref);
      return isFields(data) ? masked(rule, data) : null;
    } catch (error) {
      // Not there (a create's before, a refused write's resource): the write decides. Any
      // other failure (a name PostgreSQL cannot hold) has ended the transaction: it is the
      // call's answer, as it would be without the entry.
      if (toApiError(error).status === 404) return null;
      throw error;
    }
  }

  return {
    async run<R extends StepResult>(
      { ctx, path, input: parsed, next }: AuditCall<R>,
    ): Promise<R> {
      const rule: AuditRule = AUDIT_RULES[path] ??
        { type: path.split(".")[0], kind: "action", ref: () => ({}) };
      const input = isFields(parsed) ? parsed : {};
      const resourceId = (ref: ResourceRef | null) => rule.id ?? Object.values(ref ?? {}).join("/");
      const entry = (ref: ResourceRef | null): Omit<AuditRecord, "before" | "after"> => ({
        actor: ctx.principal.name,
        actorSource: ctx.principal.source,
        address: ctx.request?.address,
        userAgent: ctx.request?.userAgent,
        requestId: ctx.request?.requestId,
        operation: path,
        resourceType: rule.type,
        resourceId: resourceId(ref),
      });
      if (rule.kind === "action") {
        const result = await next(ctx.db);
        if (result.ok) {
          const data = isFields(result.data) && isFields(result.data.data)
            ? result.data.data
            : undefined;
          await recordChange(ctx.db, {
            ...entry(rule.ref(input, data)),
            before: null,
            after: null,
          });
        }
        return result;
      }
      let result: R | undefined;
      try {
        const pool = rule.budget ? withBudget(ctx.db, rule.budget) : ctx.db;
        await inJoinedTransaction({ pool, root: ctx.db, savepoints: rule.retries }, async (db) => {
          const named = rule.kind === "create" ? null : rule.ref(input, undefined);
          const readBefore = rule.tells ? null : await read(ctx, db, rule, named);
          result = await next(db);
          if (!result.ok) throw new Refused();
          const data = isFields(result.data) && isFields(result.data.data)
            ? result.data.data
            : undefined;
          const ref = rule.kind === "delete" ? named : rule.ref(input, data);
          const told = ref === null ? undefined : storedIn(db, `${rule.type}:${resourceId(ref)}`);
          if (rule.tells && !isFields(told?.before)) {
            throw new Error(`${path} did not hand over its resource as it was (stored)`);
          }
          const before = rule.tells ? masked(rule, { ...told!.before as Fields }) : readBefore;
          const after = rule.kind === "delete"
            ? null
            : rule.answers && data
            ? masked(rule, { ...data })
            : isFields(told?.after)
            ? masked(rule, { ...told.after })
            : await read(ctx, db, rule, ref);
          let change = { before, after };
          if (before !== null && after !== null) change = changed(before, after);
          if (rule.renews !== undefined && change.before !== null && change.after !== null) {
            change.before[rule.renews] = REDACTED;
            change.after[rule.renews] = CHANGED;
          }
          if (change.after !== null) markWritten(input, ref, before, after, change);
          await recordChange(db, { ...entry(named ?? ref), ...change });
        });
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
      }
      return result!;
    },
  };
}
