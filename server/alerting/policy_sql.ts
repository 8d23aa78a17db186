/**
 * The alert policy that applies to a project, in SQL: per field, the project's override
 * (`project_alerts`, null to inherit) or else the global value (`alert_settings`). Written once
 * for every query that decides from it (`mergePolicy` in `server/domain/alerts.ts` is the same
 * rule in TypeScript).
 *
 * @module
 */
import type { AlertPolicyField } from "@probe/shared";
import { type RawBuilder, sql } from "kysely";

/**
 * `coalesce(pa.f, g.f) as f` for each field: for a query that joins `project_alerts` as `pa`
 * (left join) and `alert_settings` as `g`.
 */
export function effectivePolicy(...fields: AlertPolicyField[]): RawBuilder<unknown> {
  return sql.join(
    fields.map((f) => sql`coalesce(${sql.ref(`pa.${f}`)}, ${sql.ref(`g.${f}`)}) as ${sql.ref(f)}`),
  );
}
