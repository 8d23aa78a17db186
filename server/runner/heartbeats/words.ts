/**
 * What heartbeats' failures say (the incident's error, the alert event's), and the maintenance
 * windows their times are checked against.
 *
 * @module
 */
import type { PingKind } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../../storage/database.ts";
import { json } from "../../storage/json.ts";

/** How much of a ping's body a failure's words carry. */
const EXCERPT_CHARS = 500;

/** `: <the body's start>` to end a failure's words with, or nothing without a body. */
export function excerpt(body: string | null): string {
  const text = body?.trim().replace(/\s+/g, " ") ?? "";
  if (text === "") return "";
  return `: ${text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text}`;
}

/** What a failure ping says. */
export function failureWords(
  { kind, exitCode, body }: { kind: PingKind; exitCode: number | null; body: string | null },
): string {
  const what = kind === "exit"
    ? `the job exited with code ${exitCode}`
    : "the job reported a failure";
  return `${what}${excerpt(body)}`;
}

/** A maintenance window, in ms. */
export interface Window {
  start: number;
  end: number;
}

/** Whether `at` falls in one of `windows` (`[start, end)`). */
export const inWindow = (windows: readonly Window[], at: number) =>
  windows.some((w) => w.start <= at && at < w.end);

/** The windows of `projects` that hold one of `times`, by project. */
export async function windowsOf(
  db: Db,
  projects: readonly string[],
  times: readonly { at: number }[],
): Promise<Map<string, Window[]>> {
  if (projects.length === 0 || times.length === 0) return new Map();
  const first = Math.min(...times.map((t) => t.at));
  const last = Math.max(...times.map((t) => t.at));
  const { rows } = await sql<{ project: string; starts_at: Date | string; ends_at: Date | string }>`
    select project, starts_at, ends_at from maintenance_windows
    where project in (select x.p from json_to_recordset(${json(projects.map((p) => ({ p })))})
      as x(p text))
      and starts_at <= ${new Date(last).toISOString()}
      and ends_at > ${new Date(first).toISOString()}`.execute(db);
  const windows = new Map<string, Window[]>();
  for (const r of rows) {
    const list = windows.get(r.project) ?? [];
    list.push({ start: new Date(r.starts_at).getTime(), end: new Date(r.ends_at).getTime() });
    windows.set(r.project, list);
  }
  return windows;
}
