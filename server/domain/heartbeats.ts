/**
 * Heartbeats: made, read, changed and deleted. Each is watched through a probe row of its own
 * (`heartbeat://<name>`, run from the built-in location only, with a schedule row no runner
 * claims), so its runs, states, incidents and notifications are the probes' own; its settings
 * and ping state are its `heartbeats` row. The deadlines are `heartbeat_timing.ts`'s; pings are
 * recorded by `server/runner/heartbeats/pings.ts`, missed deadlines by `server/runner/heartbeats/watch.ts`.
 *
 * Before its first ping a heartbeat's deadline counts from its creation: a job that never pings
 * is down once that deadline passes (its state reads `new` until then).
 *
 * @module
 */
import {
  type Heartbeat,
  HEARTBEAT_DEFAULT_GRACE_SECONDS,
  HEARTBEAT_MAX_SECONDS,
  HEARTBEAT_PINGS_KEPT,
  type HeartbeatCreateInput,
  type HeartbeatPatchInput,
  type HeartbeatPing,
  type HeartbeatRef,
  type HeartbeatState,
  PING_PREFIX,
  type PingKind,
} from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { probesDeleted } from "../alerting/changes.ts";
import { DomainError, isUniqueViolation, noFieldsProvided } from "./errors.ts";
import { decodeCursor, type Page, pageOf, type PageRequest, rowsToRead } from "./pages.ts";
import { probeIdOf } from "./probe_id.ts";
import { LOCAL } from "./locations.ts";
import { setDependencies } from "./dependencies.ts";
import { type HeartbeatTiming, nextDeadline, timingProblems } from "./heartbeat_timing.ts";
import { HEARTBEAT_SCHEME } from "../storage/heartbeat_url.ts";

/**
 * A heartbeat's probe's interval (s): longer than any silence between two of its results (a
 * success or a missed deadline comes at least once a period plus its grace), so that its one
 * location never counts as stale.
 */
export const HEARTBEAT_INTERVAL_SECONDS = 2 * HEARTBEAT_MAX_SECONDS;

/** Far enough that no runner ever claims a heartbeat's schedule row. */
const NEVER_DUE = "9999-01-01T00:00:00Z";

/** What heartbeat reads need beside the database: where ping URLs point, and the clock. */
export interface HeartbeatContext {
  db: Db;
  /** `PUBLIC_URL` when set, else the request's origin: ping URLs start with it. */
  baseUrl: string;
  /** Read-only keys see each ping URL's token masked. */
  masked?: boolean;
  now?: () => number;
}

export const heartbeatNotFound = () => new DomainError("not_found", "Heartbeat not found");
const projectNotFound = () => new DomainError("not_found", "Project not found");

/** A new ping token: 24 random bytes, base64url. */
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replaceAll("=", "");
}

/** The ping URL of a token, under `baseUrl` (no trailing slash needed). */
export const pingUrlOf = (baseUrl: string, token: string) =>
  `${baseUrl.replace(/\/+$/, "")}${PING_PREFIX}${token}`;

interface HeartbeatRow extends HeartbeatTiming {
  probe_key: number | string;
  project: string;
  name: string;
  probe_id: string;
  token: string;
  min_duration_seconds: number | null;
  created_at: Date | string;
  last_ping_at: Date | string | null;
  last_ping_kind: PingKind | null;
  last_success_at: Date | string | null;
  last_start_at: Date | string | null;
  last_duration_ms: number | null;
  next_deadline: Date | string;
  pings_total: number | string;
  state: string | null;
  state_since: Date | string | null;
  depends_on?: string[] | null;
}

const iso = (at: Date | string | null) => at === null ? null : new Date(at).toISOString();

function stateOf(row: HeartbeatRow): HeartbeatState {
  if (row.state === "down") return "down";
  return row.state === "up" || row.state === "degraded" ? "up" : "new";
}

function heartbeatOf(row: HeartbeatRow, c: HeartbeatContext): Heartbeat {
  return {
    project: row.project,
    name: row.name,
    probe_id: row.probe_id,
    period_seconds: row.period_seconds,
    schedule: row.schedule,
    timezone: row.timezone,
    grace_seconds: row.grace_seconds,
    max_duration_seconds: row.max_duration_seconds,
    min_duration_seconds: row.min_duration_seconds,
    state: stateOf(row),
    state_since: row.state === null ? null : iso(row.state_since),
    last_ping_at: iso(row.last_ping_at),
    last_ping_kind: row.last_ping_kind,
    last_duration_ms: row.last_duration_ms,
    next_deadline: iso(row.next_deadline),
    pings_total: Number(row.pings_total),
    ping_url: pingUrlOf(c.baseUrl, c.masked ? "****" : row.token),
    created_at: iso(row.created_at)!,
    ...(row.depends_on && { depends_on: row.depends_on }),
  };
}

/** The read of heartbeats: each with its probe's id and verdict. */
const selectHeartbeats = sql`
  select h.probe_key, h.project, h.name, p.probe_id, h.token, h.period_seconds, h.schedule,
    h.timezone, h.grace_seconds, h.max_duration_seconds, h.min_duration_seconds, h.created_at,
    h.last_ping_at, h.last_ping_kind, h.last_success_at, h.last_start_at, h.last_duration_ms,
    h.next_deadline, h.pings_total, v.state, v.state_since,
    (select json_agg(d.probe_id order by d.probe_id) from probe_dependencies pd
      join probes d on d.key = pd.depends_on where pd.probe_key = h.probe_key) as depends_on
  from heartbeats h
  join probes p on p.key = h.probe_key
  left join probe_verdicts v on v.probe_key = h.probe_key`;

async function readRow(db: Db, ref: HeartbeatRef): Promise<HeartbeatRow> {
  const { rows } = await sql<HeartbeatRow>`${selectHeartbeats}
    where h.project = ${ref.project} and h.name = ${ref.name}`.execute(db);
  if (rows.length === 0) throw heartbeatNotFound();
  return rows[0];
}

function checkTiming(t: HeartbeatTiming, at: number): void {
  const problems = timingProblems(t, at);
  if (problems.length > 0) {
    throw new DomainError("validation_failed", "Validation failed", problems);
  }
}

/** Makes a heartbeat: 404 for an unknown project, 409 for a name its project already has. */
export async function createHeartbeat(
  c: HeartbeatContext & { input: HeartbeatCreateInput },
): Promise<Heartbeat> {
  const { db, input } = c;
  const at = (c.now ?? Date.now)();
  const timing: HeartbeatTiming & { min_duration_seconds: number | null } = {
    period_seconds: input.period_seconds ?? null,
    schedule: input.schedule ?? null,
    timezone: input.schedule === undefined ? input.timezone ?? null : input.timezone ?? "UTC",
    grace_seconds: input.grace_seconds ?? HEARTBEAT_DEFAULT_GRACE_SECONDS,
    max_duration_seconds: input.max_duration_seconds ?? null,
    min_duration_seconds: input.min_duration_seconds ?? null,
  };
  checkTiming(timing, at);
  const deadline = new Date(nextDeadline(timing, { anchor: at, startedAt: null })).toISOString();
  const url = `${HEARTBEAT_SCHEME}${input.name}`;
  const created = new Date(at).toISOString();
  try {
    await db.transaction().execute(async (trx) => {
      const project = await trx.selectFrom("projects").select("name")
        .where("name", "=", input.project).forShare().executeTakeFirst();
      if (!project) throw projectNotFound();
      const probe = await trx.insertInto("probes").values({
        project: input.project,
        probe_id: probeIdOf("GET", url),
        url,
        method: "GET",
        headers: json({}),
        body: null,
        latency: null,
        label: input.name,
        expect: null,
        interval_seconds: HEARTBEAT_INTERVAL_SECONDS,
        timeout_ms: null,
        locations: [LOCAL],
      }).returning("key").executeTakeFirstOrThrow();
      const key = String(probe.key);
      await trx.insertInto("probe_schedule")
        .values({ probe_key: key, location: LOCAL, next_due_at: NEVER_DUE }).execute();
      await sql`
        insert into heartbeats (probe_key, project, name, token, period_seconds, schedule,
          timezone, grace_seconds, max_duration_seconds, min_duration_seconds, created_at,
          updated_at, success_deadline, next_deadline)
        values (${key}, ${input.project}, ${input.name}, ${newToken()}, ${timing.period_seconds},
          ${timing.schedule}, ${timing.timezone}, ${timing.grace_seconds},
          ${timing.max_duration_seconds}, ${timing.min_duration_seconds}, ${created}, ${created},
          ${deadline}, ${deadline})`.execute(trx);
      if (input.depends_on !== undefined) {
        await setDependencies(trx, { key, project: input.project, dependsOn: input.depends_on });
      }
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new DomainError("conflict", "This project already has a heartbeat of that name");
    }
    throw error;
  }
  return heartbeatOf(await readRow(db, input), c);
}

export async function getHeartbeat(
  c: HeartbeatContext & { ref: HeartbeatRef },
): Promise<Heartbeat> {
  return heartbeatOf(await readRow(c.db, c.ref), c);
}

/** A project's heartbeats by name (bytewise), a page of them; 404 for an unknown project. */
export async function listHeartbeats(
  c: HeartbeatContext & { project: string; page?: PageRequest },
): Promise<Page<Heartbeat>> {
  const { db, project, page = {} } = c;
  const after = page.after === undefined ? null : decodeCursor(page.after, 1)[0];
  const { rows } = await sql<HeartbeatRow>`${selectHeartbeats}
    where h.project = ${project}
      and (${after}::text is null or h.name collate "C" > ${after}::text)
    order by h.name collate "C" limit ${rowsToRead(page)}`.execute(db);
  if (rows.length === 0) {
    const exists = await db.selectFrom("projects").select("name").where("name", "=", project)
      .executeTakeFirst();
    if (!exists) throw projectNotFound();
  }
  const paged = pageOf(rows, page, (r) => [r.name], "heartbeats");
  return { rows: paged.rows.map((r) => heartbeatOf(r, c)), next: paged.next };
}

/**
 * Changes a heartbeat's timing: `period_seconds` replaces a schedule and `schedule` a period.
 * Its deadline is counted again from its last success (or its creation).
 */
export async function updateHeartbeat(
  c: HeartbeatContext & { input: HeartbeatPatchInput },
): Promise<Heartbeat> {
  const { db, input } = c;
  const { project, name, ...fields } = input;
  if (Object.keys(fields).length === 0) throw noFieldsProvided();
  if (fields.period_seconds !== undefined && fields.schedule !== undefined) {
    throw new DomainError("validation_failed", "Validation failed", [
      { path: "schedule", message: "give either period_seconds or schedule" },
    ]);
  }
  const at = (c.now ?? Date.now)();
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<HeartbeatRow>`
      select * from heartbeats where project = ${project} and name = ${name} for update`
      .execute(trx);
    const row = rows[0];
    if (!row) throw heartbeatNotFound();
    const toSchedule = fields.schedule !== undefined;
    const toPeriod = fields.period_seconds !== undefined;
    const schedule = toPeriod ? null : fields.schedule ?? row.schedule;
    const timing = {
      period_seconds: toSchedule ? null : fields.period_seconds ?? row.period_seconds,
      schedule,
      timezone: schedule === null
        ? (fields.timezone ?? null)
        : fields.timezone ?? (toSchedule ? "UTC" : row.timezone),
      grace_seconds: fields.grace_seconds ?? row.grace_seconds,
      max_duration_seconds: fields.max_duration_seconds !== undefined
        ? fields.max_duration_seconds
        : row.max_duration_seconds,
      min_duration_seconds: fields.min_duration_seconds !== undefined
        ? fields.min_duration_seconds
        : row.min_duration_seconds,
    };
    checkTiming(timing, at);
    const startedAt = row.last_start_at === null ? null : new Date(row.last_start_at).getTime();
    const anchor = new Date(row.last_success_at ?? row.created_at).getTime();
    const success = nextDeadline(timing, { anchor, startedAt: null });
    const next = nextDeadline(timing, { anchor, startedAt });
    await sql`
      update heartbeats set period_seconds = ${timing.period_seconds},
        schedule = ${timing.schedule}, timezone = ${timing.timezone},
        grace_seconds = ${timing.grace_seconds},
        max_duration_seconds = ${timing.max_duration_seconds},
        min_duration_seconds = ${timing.min_duration_seconds},
        success_deadline = ${new Date(success).toISOString()},
        next_deadline = ${new Date(next).toISOString()},
        updated_at = ${new Date(at).toISOString()}
      where probe_key = ${row.probe_key}`.execute(trx);
    if (fields.depends_on !== undefined) {
      await setDependencies(trx, {
        key: String(row.probe_key),
        project,
        dependsOn: fields.depends_on,
      });
    }
  });
  return heartbeatOf(await readRow(db, { project, name }), c);
}

/** Deletes a heartbeat, its pings and its probe; its open incident is resolved as deleted. */
export function deleteHeartbeat({ db, ref }: { db: Db; ref: HeartbeatRef }): Promise<void> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ probe_key: number | string }>`
      select probe_key from heartbeats where project = ${ref.project} and name = ${ref.name}`
      .execute(trx);
    if (rows.length === 0) throw heartbeatNotFound();
    const key = String(rows[0].probe_key);
    const deleted = await trx.deleteFrom("probes").where("key", "=", key).returning("key")
      .executeTakeFirst();
    if (!deleted) throw heartbeatNotFound();
    await probesDeleted(trx, { keys: [key] });
  });
}

interface PingRow {
  n: number | string;
  at: Date | string;
  kind: PingKind;
  exit_code: number | null;
  method: string;
  address: string | null;
  body: string | null;
  body_bytes: number;
}

/** A heartbeat's latest pings, the latest first (at most `HEARTBEAT_PINGS_KEPT` are kept). */
export async function listHeartbeatPings(
  { db, ref, limit = HEARTBEAT_PINGS_KEPT }: { db: Db; ref: HeartbeatRef; limit?: number },
): Promise<HeartbeatPing[]> {
  const { rows: found } = await sql<{ probe_key: number | string }>`
    select probe_key from heartbeats where project = ${ref.project} and name = ${ref.name}`
    .execute(db);
  if (found.length === 0) throw heartbeatNotFound();
  const { rows } = await sql<PingRow>`
    select n, at, kind, exit_code, method, address, body, body_bytes from heartbeat_pings
    where heartbeat_key = ${found[0].probe_key} order by n desc limit ${limit}`.execute(db);
  return rows.map((r) => ({ ...r, n: Number(r.n), at: iso(r.at)! }));
}
