import type { IamAlivePatchInput, IamAliveSettings } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { noFieldsProvided } from "./errors.ts";

export async function getIamAlive({ db }: { db: Db }): Promise<IamAliveSettings> {
  return await db.selectFrom("iam_alive_settings")
    .select(["enabled", "interval_hours", "channels"])
    .where("id", "=", 1).executeTakeFirstOrThrow() as IamAliveSettings;
}

/**
 * Updates the settings; sending interval_hours or channels without `enabled` turns reporting on.
 * The input is validated whole before this runs, so a partly valid request changes nothing.
 * Turning reporting on, or sending a schedule while it stays on, makes a report due at once, so
 * the operator sees at once that it works.
 */
export async function updateIamAlive(
  { db, input }: { db: Db; input: IamAlivePatchInput },
): Promise<IamAliveSettings> {
  if (Object.keys(input).length === 0) throw noFieldsProvided();
  const sendsSchedule = input.interval_hours !== undefined || input.channels !== undefined;
  const enabled = input.enabled ?? (sendsSchedule ? true : undefined);
  // In SET, `enabled` is the value before this update.
  const nextReport = enabled !== true
    ? undefined
    : sendsSchedule
    ? sql<null>`null`
    : sql<Date | null>`case when enabled then next_report_at else null end`;
  return await db.updateTable("iam_alive_settings")
    .set({
      ...(enabled !== undefined && { enabled }),
      ...(input.interval_hours !== undefined && { interval_hours: input.interval_hours }),
      ...(input.channels !== undefined && { channels: json(input.channels) }),
      ...(nextReport && { next_report_at: nextReport }),
      updated_at: sql`now()`,
    })
    .where("id", "=", 1)
    .returning(["enabled", "interval_hours", "channels"])
    .executeTakeFirstOrThrow() as IamAliveSettings;
}
