/**
 * Maintenance windows: spans `[starts_at, ends_at)` of a project during which its probes still
 * run and are recorded, as in maintenance, without transition alerts and outside uptime.
 *
 * @module
 */
import {
  type MaintenanceCreateInput,
  type MaintenanceListInput,
  type MaintenanceRef,
  type MaintenanceState,
  type MaintenanceWindow,
  MAX_MAINTENANCE_WINDOWS,
} from "@probe/shared";
import type { ExpressionBuilder } from "kysely";
import type { Db } from "../storage/database.ts";
import type { Database } from "../storage/schema.ts";
import { DomainError, notFound } from "./errors.ts";

const windowNotFound = () => new DomainError("not_found", "Maintenance window not found");

const WINDOW_COLUMNS = [
  "id",
  "project",
  "starts_at",
  "ends_at",
  "reason",
  // A generated column's read type is its column type: say what the drivers give.
  (eb: ExpressionBuilder<Database, "maintenance_windows">) =>
    eb.ref("created_at").$castTo<Date | string>().as("created_at"),
] as const;

interface WindowRow {
  id: number | string;
  project: string;
  starts_at: Date | string;
  ends_at: Date | string;
  reason: string | null;
  created_at: Date | string;
}

const iso = (d: Date | string) => new Date(d).toISOString();

/** Where a window stands at `now`: ends are exclusive, so a window is past from `ends_at` on. */
export function stateAt(window: { starts_at: Date; ends_at: Date }, now: Date): MaintenanceState {
  if (now.getTime() < window.starts_at.getTime()) return "upcoming";
  if (now.getTime() < window.ends_at.getTime()) return "active";
  return "past";
}

function toWindow(row: WindowRow, now: Date): MaintenanceWindow {
  const starts_at = new Date(row.starts_at);
  const ends_at = new Date(row.ends_at);
  return {
    id: String(row.id),
    project: row.project,
    starts_at: starts_at.toISOString(),
    ends_at: ends_at.toISOString(),
    reason: row.reason,
    state: stateAt({ starts_at, ends_at }, now),
    created_at: iso(row.created_at),
  };
}

/** 404 for a missing project; `lock` holds its row until the transaction ends. */
async function projectExists(db: Db, project: string, lock = false): Promise<void> {
  let query = db.selectFrom("projects").select("name").where("name", "=", project);
  if (lock) query = query.forNoKeyUpdate();
  if (!(await query.executeTakeFirst())) throw notFound("Project");
}

/**
 * A project's windows ordered by `starts_at` (then by id), all of them or those in one state at
 * `now`; 404 for a missing project.
 */
export async function listMaintenance(
  { db, input, now = new Date() }: { db: Db; input: MaintenanceListInput; now?: Date },
): Promise<MaintenanceWindow[]> {
  await projectExists(db, input.project);
  let query = db.selectFrom("maintenance_windows").select(WINDOW_COLUMNS)
    .where("project", "=", input.project);
  if (input.state === "active") {
    query = query.where("starts_at", "<=", now).where("ends_at", ">", now);
  } else if (input.state === "upcoming") {
    query = query.where("starts_at", ">", now);
  } else if (input.state === "past") {
    query = query.where("ends_at", "<=", now);
  }
  const rows = await query.orderBy("starts_at").orderBy("id").execute();
  return rows.map((row) => toWindow(row, now));
}

/**
 * Adds a window to a project. A project holds at most `MAX_MAINTENANCE_WINDOWS` (past ones
 * included): counted under the project row's lock, so that two creates at once cannot both
 * take the last place.
 */
export async function createMaintenance(
  { db, input, now = new Date() }: { db: Db; input: MaintenanceCreateInput; now?: Date },
): Promise<MaintenanceWindow> {
  return await db.transaction().execute(async (trx) => {
    await projectExists(trx, input.project, true);
    const { count } = await trx.selectFrom("maintenance_windows")
      .select((eb) => eb.fn.countAll<number | string>().as("count"))
      .where("project", "=", input.project).executeTakeFirstOrThrow();
    if (Number(count) >= MAX_MAINTENANCE_WINDOWS) {
      throw new DomainError(
        "conflict",
        `A project holds at most ${MAX_MAINTENANCE_WINDOWS} maintenance windows`,
      );
    }
    const row = await trx.insertInto("maintenance_windows")
      .values({
        project: input.project,
        starts_at: new Date(input.starts_at),
        ends_at: new Date(input.ends_at),
        reason: input.reason ?? null,
      })
      .returning(WINDOW_COLUMNS)
      .executeTakeFirstOrThrow();
    return toWindow(row, now);
  });
}

/** Window ids are positive bigints: anything else names no window. */
const WINDOW_ID = /^[1-9][0-9]{0,18}$/;
const MAX_BIGINT = 2n ** 63n - 1n;

/**
 * Deletes one window of a project; 404 when the project holds no such window (a missing project
 * holds none).
 */
export async function deleteMaintenance(
  { db, ref }: { db: Db; ref: MaintenanceRef },
): Promise<void> {
  if (!WINDOW_ID.test(ref.id) || BigInt(ref.id) > MAX_BIGINT) throw windowNotFound();
  const deleted = await db.deleteFrom("maintenance_windows")
    .where("project", "=", ref.project).where("id", "=", ref.id)
    .returning("id").executeTakeFirst();
  if (!deleted) throw windowNotFound();
}

/**
 * Whether a project has a window covering `at` (`starts_at <= at < ends_at`). The runner decides
 * this when a run starts; the same condition in SQL is
 * `exists (select 1 from maintenance_windows m where m.project = … and m.starts_at <= … and m.ends_at > …)`.
 */
export async function isInMaintenance(db: Db, project: string, at: Date): Promise<boolean> {
  const row = await db.selectFrom("maintenance_windows").select("id")
    .where("project", "=", project).where("starts_at", "<=", at).where("ends_at", ">", at)
    .limit(1).executeTakeFirst();
  return row !== undefined;
}
