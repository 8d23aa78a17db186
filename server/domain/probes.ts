import {
  CERTIFICATE_ON_HTTP_MESSAGE,
  certificateOnHttp,
  kindProblems,
  MAX_PAGE_LIMIT,
  type Probe,
  PROBE_INTERVAL_SECONDS,
  PROBE_TIMEOUT_MS,
  type ProbeCreateInput,
  type ProbePatchInput,
  type ProbeRef,
  type ProbeWritten,
} from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { prepared } from "../storage/prepared.ts";
import { json } from "../storage/json.ts";
import { DomainError, isUniqueViolation, noFieldsProvided, notFound } from "./errors.ts";
import {
  decodeCursor,
  encodeCursor,
  listTooLong,
  notACursor,
  type Page,
  pageOf,
  type PageRequest,
  rowsToRead,
} from "./pages.ts";
import { probeIdOf } from "./probe_id.ts";
import { gridAfter, offsetOf } from "./schedule.ts";
import { probeChanged, probesDeleted } from "../alerting/changes.ts";
import type { ProbeState } from "../storage/schema.ts";
import {
  LOCAL,
  localNameOf,
  type LocationNames,
  shownLocation,
  shownLocations,
  storedLocations,
} from "./locations.ts";
import { syncProbeLocations } from "./probe_locations.ts";
import { STALE_INTERVALS } from "../alerting/verdicts.ts";
import { HEARTBEAT_SCHEME } from "../storage/heartbeat_url.ts";
import { setDependencies } from "./dependencies.ts";
import { among, type Visible } from "./visible.ts";

/** The columns a probe is read with: exactly the fields of the `probe` schema. */
export const probeColumns = [
  "project",
  "probe_id",
  "url",
  "method",
  "headers",
  "body",
  "latency",
  "label",
  "expect",
  "interval_seconds",
  "timeout_ms",
] as const;

type Definition = Pick<
  Probe,
  | "url"
  | "method"
  | "headers"
  | "body"
  | "latency"
  | "label"
  | "expect"
  | "interval_seconds"
  | "timeout_ms"
>;

/**
 * The service-wide settings a probe without its own interval or timeout runs with
 * (`PROBE_INTERVAL_SECONDS`, `PROBE_TIMEOUT_MS`): the configuration's defaults unless given.
 */
export interface ProbeDefaults extends LocationNames {
  intervalSeconds: number;
  timeoutMs: number;
}

export const DEFAULT_PROBE_SETTINGS: ProbeDefaults = {
  intervalSeconds: PROBE_INTERVAL_SECONDS.default,
  timeoutMs: PROBE_TIMEOUT_MS.default,
};

/**
 * Moves a probe's next due time after its interval changed, to the probe's interval as stored
 * now (its own, or `defaults`): to the first point of its new grid after `now` if that comes
 * before the time it was due, else it stays. So a shorter interval takes effect within one new
 * interval (one run, no burst) and a longer one after the run already due (then the run is
 * recorded onto the new grid). A run of the probe leased by a runner keeps its due time (it is
 * recorded against it): the first point of the new grid after that run is left in `due_by`, and
 * recording the run applies it. A probe without a schedule row yet gets one from the runner, on
 * its own interval.
 *
 * Called after the probe's write has committed, in a transaction of its own that locks the
 * schedule row alone: a transaction holding the probe row and waiting for the schedule row could
 * deadlock with a runner recording a run (schedule row, then the probe's key for the result).
 */
export function rescheduleProbe(
  db: Db,
  { key, defaults, now }: { key: string; defaults: ProbeDefaults; now: number },
): Promise<void> {
  return db.transaction().execute(async (trx) => {
    // One row per location it runs from, locked in the order runners lock them.
    const rows = await trx.selectFrom("probe_schedule")
      .select(["location", "next_due_at", "lease_until", "leased_by"])
      .where("probe_key", "=", key).orderBy("location").forUpdate().execute();
    if (rows.length === 0) return;
    const probe = await trx.selectFrom("probes").select("interval_seconds")
      .where("key", "=", key).executeTakeFirst();
    if (!probe) return;
    for (const row of rows) {
      await moveSchedule(trx, key, row, intervalMsOf(probe.interval_seconds, defaults), now);
    }
  });
}

/** A probe's interval in ms: its own, or the service-wide one. */
const intervalMsOf = (seconds: number | null, defaults: ProbeDefaults) =>
  (seconds ?? defaults.intervalSeconds) * 1000;

async function moveSchedule(
  trx: Db,
  key: string,
  row: {
    location: string;
    next_due_at: Date | string;
    lease_until: Date | string | null;
    leased_by: string | null;
  },
  intervalMs: number,
  now: number,
): Promise<void> {
  const due = new Date(row.next_due_at).getTime();
  const offset = offsetOf(key, intervalMs);
  const leased = row.leased_by !== null && row.lease_until !== null &&
    new Date(row.lease_until).getTime() >= now;
  const set = leased
    ? { due_by: new Date(gridAfter(Math.max(now, due), offset, intervalMs)).toISOString() }
    : {
      next_due_at: new Date(Math.min(due, gridAfter(now, offset, intervalMs))).toISOString(),
      due_by: null,
    };
  await trx.updateTable("probe_schedule").set(set).where("probe_key", "=", key)
    .where("location", "=", row.location).execute();
}

/** Columns written from a definition; `probe_id` follows method and URL only. */
function definitionColumns(d: Definition) {
  const problems = kindProblems(d).map((p) => ({
    path: p.path.join("."),
    message: p.message,
  }));
  if (certificateOnHttp(d.url, d.expect)) {
    problems.unshift({ path: "expect.certificate_days", message: CERTIFICATE_ON_HTTP_MESSAGE });
  }
  if (problems.length > 0) {
    throw new DomainError("validation_failed", "Validation failed", problems);
  }
  return {
    probe_id: probeIdOf(d.method, d.url),
    url: d.url,
    method: d.method,
    headers: json(d.headers),
    body: d.body === null ? null : json(d.body),
    latency: d.latency,
    label: d.label,
    expect: d.expect === null ? null : json(d.expect),
    interval_seconds: d.interval_seconds,
    timeout_ms: d.timeout_ms,
  };
}

/** How many times a create meets a row another writer committed meanwhile before it gives up. */
const CREATE_ATTEMPTS = 5;

/**
 * Holds, until the transaction ends, the lock on one URL of one project: writers that would put
 * a probe at that URL (creates, and PATCHes moving a probe there) take it before they write, so
 * they write one after the other instead of meeting inside PostgreSQL's unique indexes.
 */
async function lockUrl(trx: Db, project: string, url: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`${project} ${url}`}, 0))`
    .execute(trx);
}

/** A deadlock or a unique violation: the transaction is rolled back and may be tried again. */
function isRetryable(error: unknown): boolean {
  return isUniqueViolation(error) ||
    (typeof error === "object" && error !== null && (error as { code?: unknown }).code === "40P01");
}

/**
 * Creates a probe, or rewrites the one the project already has for that URL: the whole
 * definition is replaced, and fields not sent take their defaults. The project row is locked
 * for share so that a concurrent delete of the project cannot leave this probe behind.
 *
 * `ON CONFLICT (project, url)` settles two creates of one URL only when one of them sees the
 * other's row: when both insert at the same moment, PostgreSQL checks the other unique index
 * (`probes_project_probe_id_key`, not the conflict target) first and the second insert fails
 * with a unique violation. It is tried again then, in a new transaction that sees the row the
 * other writer committed and so rewrites it (the same for a PATCH that moved a probe onto the
 * URL meanwhile). Creates of one URL, and PATCHes moving a probe to it, take a lock on that URL
 * first (`lockUrl`), so they seldom meet at all: without it, two inserts meeting in both unique
 * indexes could also deadlock (each waiting for the other's index entry), which is tried again
 * the same way.
 */
export async function createProbe(
  { db, input, defaults = DEFAULT_PROBE_SETTINGS, now = Date.now }: {
    db: Db;
    input: ProbeCreateInput;
    /** The service-wide interval, for moving a rewritten probe's schedule (`rescheduleProbe`). */
    defaults?: ProbeDefaults;
    now?: () => number;
  },
): Promise<{ probe: ProbeWritten; created: boolean }> {
  for (let attempt = 1;; attempt++) {
    let done;
    try {
      done = await createOnce({ db, input, defaults });
    } catch (error) {
      if (attempt >= CREATE_ATTEMPTS || !isRetryable(error)) throw error;
      continue;
    }
    const { moved, placed, ...written } = done;
    if (placed !== null) await syncProbeLocations(db, { keys: [placed] });
    if (moved !== null) await rescheduleProbe(db, { key: moved, defaults, now: now() });
    return written;
  }
}

/**
 * One try of `createProbe`; `moved` names a rewritten probe whose interval changed, `placed` a
 * probe whose schedule rows must follow its locations (a rewrite, or a new probe with its own).
 */
function createOnce(
  { db, input, defaults }: { db: Db; input: ProbeCreateInput; defaults: ProbeDefaults },
): Promise<
  { probe: ProbeWritten; created: boolean; moved: string | null; placed: string | null }
> {
  const columns = definitionColumns({
    url: input.url,
    method: input.method ?? "GET",
    headers: input.headers ?? {},
    body: input.body ?? null,
    latency: input.latency ?? null,
    label: input.label ?? null,
    expect: input.expect ?? null,
    interval_seconds: input.interval_seconds ?? null,
    timeout_ms: input.timeout_ms ?? null,
  });
  return db.transaction().execute(async (trx) => {
    const project = await trx.selectFrom("projects").select("name")
      .where("name", "=", input.project).forShare().executeTakeFirst();
    if (!project) throw notFound("Project");
    const locations = await storedLocations(trx, input.locations ?? null, {
      local: localNameOf(defaults),
      path: "locations",
    }) ?? null;
    await lockUrl(trx, input.project, input.url);
    const before = await trx.selectFrom("probes").select(["key", "method", "interval_seconds"])
      .where("project", "=", input.project).where("url", "=", input.url).executeTakeFirst();
    const row = await trx
      .insertInto("probes")
      .values({ project: input.project, ...columns, locations })
      .onConflict((oc) =>
        oc.columns(["project", "url"]).doUpdateSet({
          probe_id: (eb) => eb.ref("excluded.probe_id"),
          method: (eb) => eb.ref("excluded.method"),
          headers: (eb) => eb.ref("excluded.headers"),
          body: (eb) => eb.ref("excluded.body"),
          latency: (eb) => eb.ref("excluded.latency"),
          label: (eb) => eb.ref("excluded.label"),
          expect: (eb) => eb.ref("excluded.expect"),
          interval_seconds: (eb) => eb.ref("excluded.interval_seconds"),
          timeout_ms: (eb) => eb.ref("excluded.timeout_ms"),
          locations: (eb) => eb.ref("excluded.locations"),
          updated_at: sql`now()`,
        })
      )
      .returning([
        "key",
        "project",
        "url",
        "probe_id",
        sql<boolean>`xmax = 0`.as("inserted"),
      ])
      .executeTakeFirstOrThrow();
    const { inserted, key, ...probe } = row;
    // A rewrite writes the whole probe: without depends_on it depends on nothing again.
    if (input.depends_on !== undefined || !inserted) {
      await setDependencies(trx, {
        key: String(key),
        project: input.project,
        dependsOn: input.depends_on ?? [],
      });
    }
    // A rewrite with another method checks something else: its state starts again.
    if (!inserted && before && before.method !== columns.method) {
      await probeChanged(trx, String(before.key));
    }
    const moved = !inserted && before &&
      intervalMsOf(before.interval_seconds, defaults) !==
        intervalMsOf(columns.interval_seconds, defaults);
    const placed = !inserted || locations !== null ? String(key) : null;
    return { probe, created: inserted, moved: moved ? String(before.key) : null, placed };
  });
}

/**
 * How many stored characters of probes (`stored_chars`: URL, headers, body and assertions) a list
 * reads at once. Probes may be ~400 KB each at the schemas' limits: a page of them is read a part
 * at a time, so that whoever is told of each part (`onRows`) can stop the reading once the answer
 * is known to be too large, instead of a whole page being read first.
 */
export const LIST_PART_CHARS = 1024 * 1024;

/**
 * Probes ordered by project and URL (bytewise), of all projects or of one; a page of them. Without
 * `limit` the list is counted first (past `MAX_PAGE_LIMIT` it is refused, nothing else read); with
 * `onWeight`, what its probes weigh as stored is told next. Each is one row back. The page's keys
 * and sizes are read next, then its probes a part of at most `LIST_PART_CHARS` at a time (at least
 * one probe).
 */
export async function listProbes(
  {
    db,
    project,
    visible,
    page = {},
    defaults = DEFAULT_PROBE_SETTINGS,
    onWeight,
    onRows,
    cutAfterChars,
  }: {
    db: Db;
    project?: string;
    /** Only the probes of these projects (`visible.ts`); every project's when absent. */
    visible?: Visible;
    page?: PageRequest;
    /** The service-wide interval and timeout, shown as the effective ones of probes without. */
    defaults?: ProbeDefaults;
    /**
     * Told of the stored characters of the page's probes (their JSON text as written) before any
     * is read, nor their keys; may throw to stop.
     */
    onWeight?: (storedChars: number) => void;
    /** Told of each part's probes once read, before the next part is; may throw to stop. */
    onRows?: (rows: Probe[]) => void;
    /**
     * For a walk through the whole list (streaming), whose pages no caller sees: the page ends
     * after the part that brings its stored characters to this many, its cursor pointing at the
     * rest.
     */
    cutAfterChars?: number;
  },
): Promise<Page<Probe>> {
  // Heartbeats' probes are the heartbeats API's alone (`heartbeats.ts`).
  let query = db.selectFrom("probes").where("url", "not like", `${HEARTBEAT_SCHEME}%`);
  // Conditions the index (`probes_list_idx`) can start a page at: bytewise, as it is ordered.
  if (project !== undefined) query = query.where(sql`project collate "C"`, "=", project);
  if (visible !== undefined) query = query.where(among("project", visible));
  if (page.after !== undefined) {
    const [afterProject, afterUrl] = decodeCursor(page.after, 2);
    query = project === undefined
      ? query.where(
        sql<boolean>`(project collate "C", url collate "C") > (${afterProject}, ${afterUrl})`,
      )
      // Within one project, from where its last page ended.
      : query.where(sql`url collate "C"`, ">", afterUrl);
    if (project !== undefined && afterProject !== project) throw notACursor();
  }
  const ordered = query.orderBy(sql`project collate "C"`).orderBy(sql`url collate "C"`);
  if (page.limit === undefined) {
    // Past its limit such a list is refused: counted first, in any order, one row back.
    const { n } = await db.selectFrom(query.select("key").limit(rowsToRead(page)).as("l"))
      .select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow();
    if (Number(n) > MAX_PAGE_LIMIT) throw listTooLong("probes");
  }
  if (onWeight) {
    // What the probes the page answers weigh as stored, one row back instead of their keys.
    const { chars } = await db
      .selectFrom(ordered.select("stored_chars").limit(page.limit ?? MAX_PAGE_LIMIT).as("l"))
      .select((eb) => eb.fn.sum("l.stored_chars").as("chars")).executeTakeFirstOrThrow();
    onWeight(Number(chars ?? 0));
  }
  const keys = await ordered.select(["key", "project", "url", "stored_chars"])
    .limit(rowsToRead(page)).execute();
  const keyOf = (row: { project: string; url: string }) => [row.project, row.url];
  const { rows: listed, next } = pageOf(keys, page, keyOf, "probes");
  const rows: Probe[] = [];
  let chars = 0;
  const parts = partsOf(listed);
  for (const [i, part] of parts.entries()) {
    const read = await db.selectFrom("probes")
      .innerJoin("projects", "projects.name", "probes.project")
      .leftJoin("probe_verdicts", "probe_verdicts.probe_key", "probes.key")
      .select([...probeReadColumns, ...stateColumns])
      .where("probes.key", "in", part.map((row) => row.key))
      .orderBy(sql`probes.project collate "C"`).orderBy(sql`probes.url collate "C"`).execute();
    // A probe deleted since its key was read is left out, as a later page would leave it.
    const probes = read.map((row) => probeOf(row, defaults));
    onRows?.(probes);
    rows.push(...probes);
    chars += part.reduce((sum, row) => sum + row.stored_chars, 0);
    if (cutAfterChars !== undefined && chars >= cutAfterChars && i < parts.length - 1) {
      return { rows, next: encodeCursor(keyOf(part.at(-1)!)) };
    }
  }
  return { rows, next };
}

/** Consecutive runs of `rows` of at most `LIST_PART_CHARS` stored characters (or one row) each. */
function partsOf<T extends { stored_chars: number }>(rows: T[]): T[][] {
  const parts: T[][] = [];
  let chars = Infinity;
  for (const row of rows) {
    if (chars + row.stored_chars > LIST_PART_CHARS) {
      parts.push([]);
      chars = 0;
    }
    parts.at(-1)!.push(row);
    chars += row.stored_chars;
  }
  return parts;
}

const probeAt = prepared((db, project: string, probeId: string) =>
  db.selectFrom("probes")
    .innerJoin("projects", "projects.name", "probes.project")
    .leftJoin("probe_verdicts", "probe_verdicts.probe_key", "probes.key")
    .select([...probeReadColumns, ...stateColumns])
    .where("project", "=", project).where("probe_id", "=", probeId)
    .where("url", "not like", `${HEARTBEAT_SCHEME}%`)
);

/**
 * A probe's state is its verdict (decided from its locations' states by the quorum:
 * `server/alerting/verdicts.ts`); a probe without one (not yet run) is `unknown`. Each location's
 * own state comes with it (`location_states`).
 */
const stateColumns = [
  "probe_verdicts.state",
  "probe_verdicts.state_since",
  "probe_verdicts.flapping_since",
  "probes.locations",
  "projects.default_locations",
  sql<StoredLocationState[]>`(
    select coalesce(json_agg(json_build_object('location', s.location, 'state', s.state,
      'state_since', s.state_since, 'last_run_at', s.last_run_at) order by s.location), '[]')
    from probe_schedule s where s.probe_key = probes.key)`.as("location_states"),
  sql<string[] | null>`(
    select json_agg(d.probe_id order by d.probe_id) from probe_dependencies pd
    join probes d on d.key = pd.depends_on where pd.probe_key = probes.key)`.as("depends_on"),
] as const;

/** A location's schedule row as a probe read gets it (`location_states`). */
interface StoredLocationState {
  location: string;
  state: ProbeState;
  state_since: string | null;
  last_run_at: string | null;
}

/**
 * Each location's state as a read shows it: `unknown` and `stale` when it has no result for three
 * of the probe's intervals (`STALE_INTERVALS`), as the verdict counts it.
 */
function locationStatesOf(row: ProbeRow, defaults: ProbeDefaults, now = Date.now()) {
  const staleMs = STALE_INTERVALS * (row.interval_seconds ?? defaults.intervalSeconds) * 1000;
  return row.location_states.map((l) => {
    const stale = l.last_run_at !== null && new Date(l.last_run_at).getTime() < now - staleMs;
    return {
      location: shownLocation(l.location, localNameOf(defaults)),
      state: stale ? "unknown" as const : l.state,
      state_since: l.state_since === null ? null : new Date(l.state_since).toISOString(),
      last_run_at: l.last_run_at === null ? null : new Date(l.last_run_at).toISOString(),
      stale,
    };
  });
}

/** `probeColumns` named with their table, for reads that join projects (which has a label). */
const probeReadColumns = probeColumns.map((c) => `probes.${c}` as const);

interface ProbeRow {
  project: string;
  probe_id: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
  latency: number | null;
  label: string | null;
  expect: unknown;
  interval_seconds: number | null;
  timeout_ms: number | null;
  state: ProbeState | null;
  state_since: Date | string | null;
  locations: string[] | null;
  default_locations: string[] | null;
  location_states: StoredLocationState[];
  depends_on: string[] | null;
  flapping_since: Date | string | null;
}

/**
 * A stored probe as the API shows it (method and `expect` are only ever stored validated), with
 * the interval and timeout it runs at: its own, or the service-wide `defaults`.
 */
function probeOf(row: ProbeRow, defaults: ProbeDefaults): Probe {
  return {
    project: row.project,
    probe_id: row.probe_id,
    url: row.url,
    method: row.method as Probe["method"],
    headers: row.headers,
    body: row.body,
    latency: row.latency,
    label: row.label,
    expect: row.expect as Probe["expect"],
    interval_seconds: row.interval_seconds,
    timeout_ms: row.timeout_ms,
    effective_interval_seconds: row.interval_seconds ?? defaults.intervalSeconds,
    effective_timeout_ms: row.timeout_ms ?? defaults.timeoutMs,
    locations: shownLocations(row.locations, localNameOf(defaults)),
    effective_locations: (row.locations ?? row.default_locations ?? [LOCAL])
      .map((l) => shownLocation(l, localNameOf(defaults))),
    location_states: locationStatesOf(row, defaults),
    state: row.state ?? "unknown",
    state_since: row.state_since === null ? null : new Date(row.state_since).toISOString(),
    ...(row.flapping_since !== null && { flapping: true as const }),
    ...(row.depends_on !== null && { depends_on: row.depends_on }),
  };
}

export async function getProbe(
  { db, ref, defaults = DEFAULT_PROBE_SETTINGS }: {
    db: Db;
    ref: ProbeRef;
    /** The service-wide interval and timeout, shown as the effective ones of a probe without. */
    defaults?: ProbeDefaults;
  },
): Promise<Probe> {
  const [row] = await probeAt(db, ref.project, ref.probeId);
  if (!row) throw notFound("Probe");
  return probeOf(row, defaults);
}

const urlTaken = () =>
  new DomainError("validation_failed", "Validation failed", [
    { path: "url", message: "another probe of this project already has this URL" },
  ]);

/**
 * Rewrites a probe with the fields supplied; its probe_id follows its method and URL. The row
 * keeps its internal key, so whatever hangs off the probe follows it to the new id.
 */
export async function updateProbe(
  { db, input, defaults = DEFAULT_PROBE_SETTINGS, now = Date.now }: {
    db: Db;
    input: ProbePatchInput;
    /** The service-wide interval, for moving the probe's schedule (`rescheduleProbe`). */
    defaults?: ProbeDefaults;
    now?: () => number;
  },
): Promise<ProbeWritten> {
  const { project, probeId, ...fields } = input;
  if (Object.keys(fields).length === 0) throw noFieldsProvided();
  const { row, moved, placed } = await db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom("probes").select(["key", ...probeColumns])
      .where("project", "=", project).where("probe_id", "=", probeId)
      .where("url", "not like", `${HEARTBEAT_SCHEME}%`)
      .forUpdate().executeTakeFirst();
    if (!current) throw notFound("Probe");
    const next: Definition = {
      url: fields.url ?? current.url,
      method: (fields.method ?? current.method) as Probe["method"],
      headers: fields.headers ?? current.headers,
      body: fields.body !== undefined ? fields.body : current.body,
      latency: fields.latency !== undefined ? fields.latency : current.latency,
      label: fields.label !== undefined ? fields.label : current.label,
      expect: fields.expect !== undefined ? fields.expect : current.expect as Probe["expect"],
      interval_seconds: fields.interval_seconds !== undefined
        ? fields.interval_seconds
        : current.interval_seconds,
      timeout_ms: fields.timeout_ms !== undefined ? fields.timeout_ms : current.timeout_ms,
    };
    if (next.url !== current.url) {
      await lockUrl(trx, project, next.url);
      const other = await trx.selectFrom("probes").select("key")
        .where("project", "=", project).where("url", "=", next.url).executeTakeFirst();
      if (other) throw urlTaken();
    }
    const locations = await storedLocations(trx, fields.locations, {
      local: localNameOf(defaults),
      path: "locations",
    });
    try {
      const row = await trx.updateTable("probes")
        .set({
          ...definitionColumns(next),
          ...(locations !== undefined && { locations }),
          updated_at: sql`now()`,
        })
        .where("key", "=", current.key)
        .returning(["project", "url", "probe_id"])
        .executeTakeFirstOrThrow();
      if (next.url !== current.url || next.method !== current.method) {
        await probeChanged(trx, String(current.key));
      }
      const moved = intervalMsOf(next.interval_seconds, defaults) !==
        intervalMsOf(current.interval_seconds, defaults);
      const placed = locations !== undefined ? String(current.key) : null;
      if (fields.depends_on !== undefined) {
        await setDependencies(trx, {
          key: String(current.key),
          project,
          dependsOn: fields.depends_on,
        });
      }
      return { row, moved: moved ? String(current.key) : null, placed };
    } catch (error) {
      if (isUniqueViolation(error)) throw urlTaken();
      throw error;
    }
  });
  if (placed !== null) await syncProbeLocations(db, { keys: [placed] });
  if (moved !== null) await rescheduleProbe(db, { key: moved, defaults, now: now() });
  return row;
}

export function deleteProbe({ db, ref }: { db: Db; ref: ProbeRef }): Promise<void> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.deleteFrom("probes")
      .where("project", "=", ref.project).where("probe_id", "=", ref.probeId)
      .where("url", "not like", `${HEARTBEAT_SCHEME}%`)
      .returning("key").executeTakeFirst();
    if (!row) throw notFound("Probe");
    await probesDeleted(trx, { keys: [String(row.key)] });
  });
}
