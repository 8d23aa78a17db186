/**
 * The projects a caller sees, as the domain's cross-project reads take them: `undefined` for
 * every project, or the names of those a project-scoped principal sees (`server/procedures/scope.ts`).
 *
 * @module
 */
import { type RawBuilder, sql } from "kysely";

/** Every project (undefined), or only these. */
export type Visible = readonly string[] | undefined;

/**
 * A condition: `column` (a project name) is one of `visible`; `true` for every project, `false`
 * for none. One project is compared with `=`, so that the statement is the one a single
 * project's read always was.
 */
export function among(column: string, visible: Visible): RawBuilder<boolean> {
  if (visible === undefined) return sql<boolean>`true`;
  if (visible.length === 0) return sql<boolean>`false`;
  if (visible.length === 1) return sql<boolean>`${sql.ref(column)} = ${visible[0]}`;
  return sql<boolean>`${sql.ref(column)} in (${sql.join(visible)})`;
}
