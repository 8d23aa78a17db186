import type { Project, ProjectCreateInput, ProjectDeleted, ProjectPatchInput } from "@probe/shared";
import { sql } from "kysely";
import { BUDGETS, type Db, withBudget } from "../storage/database.ts";
import { stored, takesStored } from "../storage/joined.ts";
import { prepared } from "../storage/prepared.ts";
import { DomainError, noFieldsProvided, notFound } from "./errors.ts";
import { probesDeleted, projectDisabled } from "../alerting/changes.ts";
import { decodeCursor, type Page, pageOf, type PageRequest, rowsToRead } from "./pages.ts";
import { localNameOf, type LocationNames, shownLocations, storedLocations } from "./locations.ts";
import { syncProbeLocations } from "./probe_locations.ts";
import { among, type Visible } from "./visible.ts";

const projectColumns = [
  "name as project",
  "label",
  "description",
  "status",
  "default_locations",
] as const;

type ProjectRow = Omit<Project, "default_locations"> & { default_locations: string[] | null };

/** A stored project as the API shows it: the built-in location by its configured name. */
const projectOf = (row: ProjectRow, names?: LocationNames): Project => ({
  ...row,
  default_locations: shownLocations(row.default_locations, localNameOf(names)),
});

/** Creates a project; a name that is taken is a conflict, settled by the primary key. */
export function createProject(
  { db, input, names }: { db: Db; input: ProjectCreateInput; names?: LocationNames },
): Promise<{ project: string }> {
  return db.transaction().execute(async (trx) => {
    const defaultLocations = await storedLocations(trx, input.default_locations, {
      local: localNameOf(names),
      path: "default_locations",
    });
    const row = await trx
      .insertInto("projects")
      .values({
        name: input.project,
        label: input.label ?? null,
        description: input.description ?? null,
        default_locations: defaultLocations ?? null,
      })
      .onConflict((oc) => oc.column("name").doNothing())
      .returning("name")
      .executeTakeFirst();
    if (!row) throw new DomainError("conflict", "Project already exists");
    return { project: row.name };
  });
}

/**
 * Lists projects ordered by name (bytewise), optionally only the one with an exact name; only
 * the `visible` ones (`visible.ts`) when given.
 */
export async function listProjects(
  { db, project, page = {}, names, visible }: {
    db: Db;
    project?: string;
    page?: PageRequest;
    names?: LocationNames;
    visible?: Visible;
  },
): Promise<Page<Project>> {
  let query = db.selectFrom("projects").select(projectColumns);
  if (project !== undefined) query = query.where("name", "=", project);
  if (visible !== undefined) query = query.where(among("name", visible));
  if (page.after !== undefined) {
    const [after] = decodeCursor(page.after, 1);
    query = query.where(sql<boolean>`name collate "C" > ${after}`);
  }
  const rows = await query.orderBy(sql`name collate "C"`).limit(rowsToRead(page)).execute();
  return pageOf(rows.map((r) => projectOf(r, names)), page, (row) => [row.project], "projects");
}

// Compiled once: reading one project is the service's most frequent query.
const projectNamed = prepared((db, name: string) =>
  db.selectFrom("projects").select(projectColumns).where("name", "=", name)
);

export async function getProject(
  { db, project, names }: { db: Db; project: string; names?: LocationNames },
): Promise<Project> {
  const [row] = await projectNamed(db, project);
  if (!row) throw notFound("Project");
  return projectOf(row, names);
}

/** Applies a partial update; `status: null` leaves the status as it is. */
export async function updateProject(
  { db, input, names }: {
    db: Db;
    input: ProjectPatchInput;
    names?: LocationNames;
  },
): Promise<{ project: string }> {
  const { project, ...fields } = input;
  if (Object.keys(fields).length === 0) throw noFieldsProvided();
  const changes = {
    ...(fields.label !== undefined && { label: fields.label }),
    ...(fields.description !== undefined && { description: fields.description }),
    ...(fields.status != null && { status: fields.status }),
  };
  // Someone takes the project before and after (an audited update, `stored` below): then the
  // update joins the table with itself (`was`, which the statement reads as it was before it)
  // and returns both, without a read of each.
  const hands = takesStored(db);
  const answer = await db.transaction().execute(async (trx) => {
    const defaultLocations = await storedLocations(trx, fields.default_locations, {
      local: localNameOf(names),
      path: "default_locations",
    });
    const update = trx
      .updateTable("projects")
      .set({
        ...changes,
        ...(defaultLocations !== undefined && { default_locations: defaultLocations }),
        updated_at: sql`now()`,
      })
      .where("projects.name", "=", project);
    const sides = hands
      ? await update
        .from("projects as was")
        .whereRef("was.name", "=", "projects.name")
        .returning([
          ...projectColumns.map((column) => `projects.${column}` as const),
          "was.label as was_label",
          "was.description as was_description",
          "was.status as was_status",
          "was.default_locations as was_default_locations",
        ])
        .executeTakeFirst()
      : undefined;
    const row = hands
      ? sides
      : await update.returning("projects.name as project").executeTakeFirst();
    if (!row) throw notFound("Project");
    // Its probes are no longer checked: back to `unknown`, open incidents resolved, silently.
    if (changes.status === "disabled") await projectDisabled(trx, project);
    return { project: row.project, sides };
  });
  // Its probes without their own locations follow the new default (after the commit: see
  // `syncProbeLocations`).
  if (fields.default_locations !== undefined) await syncProbeLocations(db, { project });
  if (answer.sides) {
    // The project as `getProject` reads it before and after: nothing above changes it but the
    // update.
    const { was_label, was_description, was_status, was_default_locations, ...after } =
      answer.sides;
    const before = {
      project: after.project,
      label: was_label,
      description: was_description,
      status: was_status,
      default_locations: was_default_locations,
    };
    stored(db, `project:${project}`, {
      before: projectOf(before, names),
      after: projectOf(after, names),
    });
  }
  return { project: answer.project };
}

/**
 * How long deleting a project may take: a budget of its own, not the statement timeout and
 * query deadline of requests, since archiving and deleting 100,000 probes takes seconds.
 */
export const PROJECT_DELETE_TIMEOUT_MS = BUDGETS.projectDelete.ms;

/** A timestamp in JSON as `Date.toJSON()` writes it, so archives read as they always have. */
const isoText = (column: string) =>
  sql`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Archives the project with all its probes, then removes both, in one transaction: a failure
 * anywhere rolls everything back. The transaction has its own statement timeout (`timeoutMs`),
 * and on PostgreSQL runs on the connections kept for it (`withBudget`).
 *
 * Locks are taken in one order, the order every other writer follows, so that no writer
 * deadlocks with a delete: the project row (probe creates take it for share first), then the
 * project's probe rows in key order (the runner's schedule inserts check their probe in key
 * order), then their schedule rows in key order (the runner records runs in key order). A run
 * recorded meanwhile is recorded before the delete goes on, or finds its probe gone.
 *
 * The archive is built in the database, so 100,000 probes never travel to the server and back.
 */
export function deleteProject(
  { db, project, timeoutMs = PROJECT_DELETE_TIMEOUT_MS, names }: {
    db: Db;
    project: string;
    timeoutMs?: number;
    names?: LocationNames;
  },
): Promise<ProjectDeleted> {
  const local = localNameOf(names);
  // A stored list of locations as the API shows it: '' is the built-in location's name.
  const shown = (column: string) =>
    sql`(select array_agg(case when l = '' then ${local}::text else l end order by o)
         from unnest(${sql.ref(column)}) with ordinality as t(l, o))`;
  return withBudget(db, "projectDelete").transaction().execute(async (trx) => {
    await sql`select set_config('statement_timeout', ${String(timeoutMs)}, true)`.execute(trx);
    const row = await trx.selectFrom("projects").select("name").where("name", "=", project)
      .forUpdate().executeTakeFirst();
    if (!row) throw notFound("Project");
    await sql`
      with locked as (
        select key from probes where project = ${project} order by key for update
      )
      select count(*) from locked`.execute(trx);
    await sql`
      with locked as (
        select s.probe_key, s.location from probe_schedule s
        where s.probe_key in (select key from probes where project = ${project})
        order by s.probe_key, s.location for update
      )
      delete from probe_schedule s using locked
      where s.probe_key = locked.probe_key and s.location = locked.location`
      .execute(trx);
    // Its open incidents end here; the archive keeps them all.
    await probesDeleted(trx, { project });
    await sql`
      insert into archived_projects (project, snapshot)
      select p.name, json_build_object(
        'project', json_build_object(
          'name', p.name, 'label', p.label, 'description', p.description, 'status', p.status,
          'default_locations', ${shown("p.default_locations")},
          'created_at', ${isoText("p.created_at")}, 'updated_at', ${isoText("p.updated_at")}),
        'probes', coalesce((
          select json_agg(json_build_object(
            'project', b.project, 'probe_id', b.probe_id, 'url', b.url, 'method', b.method,
            'headers', b.headers, 'body', b.body, 'latency', b.latency,
            'label', b.label, 'expect', b.expect,
            'interval_seconds', b.interval_seconds, 'timeout_ms', b.timeout_ms,
            'locations', ${shown("b.locations")},
            'created_at', ${isoText("b.created_at")}, 'updated_at', ${isoText("b.updated_at")}
          ) order by b.url collate "C")
          from probes b where b.project = p.name), '[]'::json),
        'incidents', coalesce((
          select json_agg(json_build_object(
            'id', i.id::text, 'probe_id', i.probe_id, 'label', i.label,
            'started_at', ${isoText("i.started_at")}, 'resolved_at', ${isoText("i.resolved_at")},
            'resolution', i.resolution, 'cause', i.cause, 'runs_failed', i.runs_failed,
            'last_error', i.last_error, 'acknowledged_at', ${isoText("i.acknowledged_at")}
          ) order by i.id)
          from incidents i where i.project = p.name), '[]'::json))
      from projects p where p.name = ${project}`.execute(trx);
    await trx.deleteFrom("probes").where("project", "=", project).execute();
    await trx.deleteFrom("projects").where("name", "=", project).execute();
    return { project, deleted: true, archived: true };
  });
}
