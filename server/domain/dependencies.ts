/**
 * The probes a probe depends on (`depends_on`): probes of its own project, named by their
 * probe_id, stored by key (so a dependency whose URL changes stays one, and a deleted one drops
 * out with its row). No probe may depend on itself, even through others: a write that would close
 * a cycle is refused (422 at `depends_on`). Writes of a project's dependencies are serialised by
 * a transaction-scoped lock on the project, so two writes cannot close a cycle between them.
 *
 * @module
 */
import type { ErrorDetail } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { DomainError } from "./errors.ts";
import { dependenciesChanged } from "../alerting/changes.ts";

const invalid = (details: ErrorDetail[]) =>
  new DomainError("validation_failed", "Validation failed", details);

/**
 * Replaces what probe `key` of `project` depends on with the probes named (`[]`: none). Call in
 * the write's transaction. Unknown ids, the probe itself and cycles are 422s at `path`.
 */
export async function setDependencies(
  trx: Db,
  { key, project, dependsOn, path = "depends_on" }: {
    key: string;
    project: string;
    dependsOn: readonly string[];
    path?: string;
  },
): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`probe_dependencies:${project}`}))`
    .execute(trx);
  const found = dependsOn.length === 0 ? [] : await trx.selectFrom("probes")
    .select(["key", "probe_id"]).where("project", "=", project)
    .where("probe_id", "in", [...dependsOn]).execute();
  const keyOf = new Map(found.map((r) => [r.probe_id, String(r.key)]));
  const details = dependsOn.flatMap((id, i): ErrorDetail[] =>
    !keyOf.has(id)
      ? [{ path: `${path}.${i}`, message: `no probe "${id}" in project "${project}"` }]
      : keyOf.get(id) === key
      ? [{ path: `${path}.${i}`, message: "a probe cannot depend on itself" }]
      : []
  );
  if (details.length > 0) throw invalid(details);
  const keys = [...new Set(dependsOn.map((id) => keyOf.get(id)!))];
  if (keys.length > 0) {
    // Whether `key` is reached from the new dependencies by the stored ones: then a cycle.
    const { rows } = await sql<{ probe_id: string }>`
      with recursive reach(k, trail) as (
        select p.key, array[p.key] from probes p where p.key in (${sql.join(keys)})
        union
        select d.depends_on, r.trail || d.depends_on
        from reach r join probe_dependencies d on d.probe_key = r.k
        where d.depends_on <> all(r.trail) and r.k <> ${key}
      )
      select p.probe_id from reach r join probes p on p.key = r.k where r.k = ${key} limit 1`
      .execute(trx);
    if (rows.length > 0) {
      throw invalid([{
        path,
        message: "would make a cycle: a probe it depends on depends on it, directly or not",
      }]);
    }
  }
  await trx.deleteFrom("probe_dependencies").where("probe_key", "=", key).execute();
  if (keys.length > 0) {
    await trx.insertInto("probe_dependencies")
      .values(keys.map((k) => ({ probe_key: key, depends_on: k }))).execute();
  }
  // In this transaction: an incident a dependency taken away kept untold is told with the write.
  await dependenciesChanged(trx, key);
}

/** The probe_ids each of these probes depends on (sorted), by key; probes with none are absent. */
export async function dependenciesOf(
  db: Db,
  keys: readonly string[],
): Promise<Map<string, string[]>> {
  if (keys.length === 0) return new Map();
  const rows = await db.selectFrom("probe_dependencies as d")
    .innerJoin("probes as p", "p.key", "d.depends_on")
    .select(["d.probe_key", "p.probe_id"])
    .where("d.probe_key", "in", [...keys])
    .orderBy("d.probe_key").orderBy("p.probe_id").execute();
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(String(r.probe_key)) ?? [];
    list.push(r.probe_id);
    out.set(String(r.probe_key), list);
  }
  return out;
}
