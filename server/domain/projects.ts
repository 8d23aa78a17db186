import type { Project, ProjectCreateInput, ProjectDeleted, ProjectPatchInput } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import { json } from "../db/json.ts";
import { probeColumns } from "./probes.ts";
import { DomainError, noFieldsProvided, notFound } from "./errors.ts";

const projectColumns = ["name as project", "label", "description", "status"] as const;

/** Creates a project; a name that is taken is a conflict, settled by the primary key. */
export async function createProject(
  { db, input }: { db: Db; input: ProjectCreateInput },
): Promise<{ project: string }> {
  const row = await db
    .insertInto("projects")
    .values({
      name: input.project,
      label: input.label ?? null,
      description: input.description ?? null,
    })
    .onConflict((oc) => oc.column("name").doNothing())
    .returning("name")
    .executeTakeFirst();
  if (!row) throw new DomainError("conflict", "Project already exists");
  return { project: row.name };
}

/** Lists projects ordered by name, optionally only the one with an exact name. */
export function listProjects(
  { db, project }: { db: Db; project?: string },
): Promise<Project[]> {
  let query = db.selectFrom("projects").select(projectColumns);
  if (project !== undefined) query = query.where("name", "=", project);
  return query.orderBy(sql`name collate "C"`).execute();
}

export async function getProject(
  { db, project }: { db: Db; project: string },
): Promise<Project> {
  const row = await db.selectFrom("projects").select(projectColumns).where("name", "=", project)
    .executeTakeFirst();
  if (!row) throw notFound("Project");
  return row;
}

/** Applies a partial update; `status: null` leaves the status as it is. */
export async function updateProject(
  { db, input }: { db: Db; input: ProjectPatchInput },
): Promise<{ project: string }> {
  const { project, ...fields } = input;
  if (Object.keys(fields).length === 0) throw noFieldsProvided();
  const changes = {
    ...(fields.label !== undefined && { label: fields.label }),
    ...(fields.description !== undefined && { description: fields.description }),
    ...(fields.status != null && { status: fields.status }),
  };
  const row = await db
    .updateTable("projects")
    .set({ ...changes, updated_at: sql`now()` })
    .where("name", "=", project)
    .returning("name")
    .executeTakeFirst();
  if (!row) throw notFound("Project");
  return { project: row.name };
}

/**
 * Archives the project with all its probes, then removes both, in one transaction: a failure
 * anywhere rolls everything back. The row lock makes concurrent probe creates wait for it.
 */
export function deleteProject(
  { db, project }: { db: Db; project: string },
): Promise<ProjectDeleted> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("projects").selectAll().where("name", "=", project)
      .forUpdate().executeTakeFirst();
    if (!row) throw notFound("Project");
    const probes = await trx.selectFrom("probes")
      .select([...probeColumns, "created_at", "updated_at"])
      .where("project", "=", project).orderBy(sql`url collate "C"`).execute();
    await trx.insertInto("archived_projects")
      .values({ project, snapshot: json({ project: row, probes }) })
      .execute();
    await trx.deleteFrom("probes").where("project", "=", project).execute();
    await trx.deleteFrom("projects").where("name", "=", project).execute();
    return { project, deleted: true, archived: true };
  });
}
