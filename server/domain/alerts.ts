/**
 * The alert policy: one global policy (the `alert_settings` row), and per project overrides
 * (`project_alerts`) where each field is a value or null to inherit. The policy that applies to
 * a project is, field by field, its override when not null, else the global value — the rule
 * the runner's SQL follows too (`effectivePolicy` in `server/alerting/policy_sql.ts`).
 *
 * @module
 */
import {
  ALERT_LOG_TARGET,
  type AlertOverrides,
  type AlertPolicy,
  type AlertPolicyPatchInput,
  type ErrorDetail,
  type EscalationStep,
  type LocationQuorum,
  type ProjectAlerts,
  type ProjectAlertsPatchInput,
} from "@probe/shared";
import { type RawBuilder, sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { DomainError, noFieldsProvided, notFound } from "./errors.ts";

const POLICY_COLUMNS = [
  "enabled",
  "targets",
  "failure_threshold",
  "success_threshold",
  "reminder_minutes",
  "notify_degraded",
  "notify_recovered",
  "location_quorum",
  "escalation",
  "flap_changes",
  "flap_minutes",
] as const;

/** `location_quorum` as stored: 0 is "majority". */
const quorumColumn = (q: LocationQuorum) => (q === "majority" ? 0 : q);
const quorumOf = (column: number): LocationQuorum => (column === 0 ? "majority" : column);

/** The global policy as stored. */
const policyOf = (row: Omit<AlertPolicy, "location_quorum"> & { location_quorum: number }) => ({
  ...row,
  location_quorum: quorumOf(row.location_quorum),
});

/** The global alert policy. */
export async function getAlertPolicy({ db }: { db: Db }): Promise<AlertPolicy> {
  return policyOf(
    await db.selectFrom("alert_settings").select(POLICY_COLUMNS)
      .where("id", "=", 1).executeTakeFirstOrThrow(),
  );
}

/**
 * Checks that every target named (by `targets` and by each escalation step) exists (the built-in
 * `log`, or a stored target) and holds the stored ones (`for share`) until the transaction ends,
 * so that deleting one of them waits and then sees the policy naming it. Every missing name is a
 * detail at its path: `targets.N`, `escalation.S.targets.N`.
 */
async function checkTargets(
  db: Db,
  fields: { targets?: readonly string[] | null; escalation?: readonly EscalationStep[] | null },
) {
  const named: [string, string][] = [
    ...(fields.targets ?? []).map((name, i): [string, string] => [`targets.${i}`, name]),
    ...(fields.escalation ?? []).flatMap((step, s) =>
      step.targets.map((name, i): [string, string] => [`escalation.${s}.targets.${i}`, name])
    ),
  ];
  const stored = [...new Set(named.map(([, name]) => name))]
    .filter((name) => name !== ALERT_LOG_TARGET);
  const found = new Set<string>();
  if (stored.length > 0) {
    const rows = await db.selectFrom("notification_targets").select("name")
      .where("name", "in", stored).orderBy("name").forShare().execute();
    for (const row of rows) found.add(row.name);
  }
  const details: ErrorDetail[] = named.flatMap(([path, name]) =>
    name === ALERT_LOG_TARGET || found.has(name)
      ? []
      : [{ path, message: `no notification target named "${name}"` }]
  );
  if (details.length > 0) {
    throw new DomainError("validation_failed", "Validation failed", details);
  }
}

/** The policy's fields as a PATCH sends them; `N` is `null` where null means "inherit". */
type PolicyFields<N extends null> = { [F in keyof AlertPolicy]?: AlertPolicy[F] | N };

/** The columns to set for the fields sent (`targets` is a json column). */
function changesOf<N extends null = never>(f: PolicyFields<N>) {
  return {
    ...(f.enabled !== undefined && { enabled: f.enabled }),
    ...(f.targets !== undefined && {
      targets: (f.targets === null ? null : json(f.targets)) as RawBuilder<string> | N,
    }),
    ...(f.failure_threshold !== undefined && { failure_threshold: f.failure_threshold }),
    ...(f.success_threshold !== undefined && { success_threshold: f.success_threshold }),
    ...(f.reminder_minutes !== undefined && { reminder_minutes: f.reminder_minutes }),
    ...(f.notify_degraded !== undefined && { notify_degraded: f.notify_degraded }),
    ...(f.notify_recovered !== undefined && { notify_recovered: f.notify_recovered }),
    ...(f.location_quorum !== undefined && {
      location_quorum: (f.location_quorum === null ? null : quorumColumn(f.location_quorum)) as
        | number
        | N,
    }),
    ...(f.escalation !== undefined && {
      escalation: (f.escalation === null ? null : json(f.escalation)) as RawBuilder<string> | N,
    }),
    ...(f.flap_changes !== undefined && { flap_changes: f.flap_changes }),
    ...(f.flap_minutes !== undefined && { flap_minutes: f.flap_minutes }),
  };
}

/**
 * Updates the global policy with the fields sent; the input is validated whole first, so a
 * request with any invalid field (or an unknown target) changes nothing. Unlike the I'm alive
 * settings, sending other fields never turns `enabled` on: only `enabled: true` does.
 */
export async function updateAlertPolicy(
  { db, input }: { db: Db; input: AlertPolicyPatchInput },
): Promise<AlertPolicy> {
  const changes = changesOf<never>(input);
  if (Object.keys(changes).length === 0) throw noFieldsProvided();
  return await db.transaction().execute(async (trx) => {
    await checkTargets(trx, input);
    return policyOf(
      await trx.updateTable("alert_settings")
        .set({ ...changes, updated_at: sql`now()` })
        .where("id", "=", 1)
        .returning(POLICY_COLUMNS)
        .executeTakeFirstOrThrow(),
    );
  });
}

/** The policy that applies: per field, the override when not null, else the global value. */
export function mergePolicy(global: AlertPolicy, overrides: AlertOverrides): AlertPolicy {
  return {
    enabled: overrides.enabled ?? global.enabled,
    targets: overrides.targets ?? global.targets,
    failure_threshold: overrides.failure_threshold ?? global.failure_threshold,
    success_threshold: overrides.success_threshold ?? global.success_threshold,
    reminder_minutes: overrides.reminder_minutes ?? global.reminder_minutes,
    notify_degraded: overrides.notify_degraded ?? global.notify_degraded,
    notify_recovered: overrides.notify_recovered ?? global.notify_recovered,
    location_quorum: overrides.location_quorum ?? global.location_quorum,
    escalation: overrides.escalation ?? global.escalation,
    flap_changes: overrides.flap_changes ?? global.flap_changes,
    flap_minutes: overrides.flap_minutes ?? global.flap_minutes,
  };
}

/** A project's overrides (all null without a row) next to the global policy, in one read. */
async function readProjectAlerts(db: Db, project: string): Promise<ProjectAlerts> {
  const row = await db.selectFrom("projects as p")
    .innerJoin("alert_settings as s", (join) => join.on("s.id", "=", 1))
    .leftJoin("project_alerts as a", "a.project", "p.name")
    .select([
      "p.name as project",
      "s.enabled as g_enabled",
      "s.targets as g_targets",
      "s.failure_threshold as g_failure_threshold",
      "s.success_threshold as g_success_threshold",
      "s.reminder_minutes as g_reminder_minutes",
      "s.notify_degraded as g_notify_degraded",
      "s.notify_recovered as g_notify_recovered",
      "s.location_quorum as g_location_quorum",
      "s.escalation as g_escalation",
      "s.flap_changes as g_flap_changes",
      "s.flap_minutes as g_flap_minutes",
      "a.enabled",
      "a.targets",
      "a.failure_threshold",
      "a.success_threshold",
      "a.reminder_minutes",
      "a.notify_degraded",
      "a.notify_recovered",
      "a.location_quorum",
      "a.escalation",
      "a.flap_changes",
      "a.flap_minutes",
    ])
    .where("p.name", "=", project)
    .executeTakeFirst();
  if (!row) throw notFound("Project");
  const global: AlertPolicy = {
    enabled: row.g_enabled,
    targets: row.g_targets,
    failure_threshold: row.g_failure_threshold,
    success_threshold: row.g_success_threshold,
    reminder_minutes: row.g_reminder_minutes,
    notify_degraded: row.g_notify_degraded,
    notify_recovered: row.g_notify_recovered,
    location_quorum: quorumOf(row.g_location_quorum),
    escalation: row.g_escalation,
    flap_changes: row.g_flap_changes,
    flap_minutes: row.g_flap_minutes,
  };
  const overrides: AlertOverrides = {
    enabled: row.enabled,
    targets: row.targets,
    failure_threshold: row.failure_threshold,
    success_threshold: row.success_threshold,
    reminder_minutes: row.reminder_minutes,
    notify_degraded: row.notify_degraded,
    notify_recovered: row.notify_recovered,
    location_quorum: row.location_quorum === null ? null : quorumOf(row.location_quorum),
    escalation: row.escalation,
    flap_changes: row.flap_changes,
    flap_minutes: row.flap_minutes,
  };
  return { project: row.project, overrides, effective: mergePolicy(global, overrides) };
}

/** A project's overrides and the policy that applies to it; 404 for a missing project. */
export function getProjectAlerts(
  { db, project }: { db: Db; project: string },
): Promise<ProjectAlerts> {
  return readProjectAlerts(db, project);
}

/** The policy that applies to a project (its overrides over the global policy). */
export async function effectivePolicy(db: Db, project: string): Promise<AlertPolicy> {
  return (await readProjectAlerts(db, project)).effective;
}

/**
 * Sets the fields sent of a project's overrides: a value overrides, null inherits again; fields
 * not sent stay as they are. The project row is held (`for share`, as probe creates do) so that
 * a project deleted meanwhile is a 404, not a foreign key failure.
 */
export async function updateProjectAlerts(
  { db, input }: { db: Db; input: ProjectAlertsPatchInput },
): Promise<ProjectAlerts> {
  const { project, ...fields } = input;
  const changes = changesOf<null>(fields);
  if (Object.keys(changes).length === 0) throw noFieldsProvided();
  return await db.transaction().execute(async (trx) => {
    const found = await trx.selectFrom("projects").select("name").where("name", "=", project)
      .forShare().executeTakeFirst();
    if (!found) throw notFound("Project");
    await checkTargets(trx, fields);
    await trx.insertInto("project_alerts")
      .values({ project, ...changes })
      .onConflict((oc) => oc.column("project").doUpdateSet({ ...changes, updated_at: sql`now()` }))
      .execute();
    return await readProjectAlerts(trx, project);
  });
}
