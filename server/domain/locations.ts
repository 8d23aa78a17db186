/**
 * Locations: the places probes run from. The built-in location is the runners on the
 * database (inside the service and `deno task runner`), named by `RUNNER_LOCATION` (`local`); it
 * has no row, and is stored as '' wherever a location is named (schedules, results, rollups, a
 * probe's `locations`, a project's `default_locations`), so that a new name in the configuration
 * keeps its schedules and history. Remote locations have a row, with their token stored only as
 * its SHA-256 digest: a token is answered once, when the location is made or its token rotated.
 *
 * @module
 */
import type { Location, LocationCreateInput, LocationPatchInput } from "@probe/shared";
import { DEFAULT_LOCAL_LOCATION } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { afterCommit } from "../storage/joined.ts";
import { DomainError, isUniqueViolation, noFieldsProvided, notFound } from "./errors.ts";
import { LOCATION_TOKEN_PREFIX } from "./location_token.ts";
import { newSecret, sha256Hex } from "../base/secret_token.ts";
import { scheduleLag } from "./schedule_lag.ts";
import { among, type Visible } from "./visible.ts";

/** How the built-in location is stored wherever a location is named. */
export const LOCAL = "";

/** The built-in location's name, as configured (`RUNNER_LOCATION`). */
export interface LocationNames {
  localLocation?: string;
}

export const localNameOf = (names?: LocationNames) =>
  names?.localLocation ?? DEFAULT_LOCAL_LOCATION;

/** A stored location ('' for the built-in one) as the API names it. */
export const shownLocation = (stored: string, local: string) => stored === LOCAL ? local : stored;

/** A location name as given to the API, as it is stored. */
export const storedLocation = (name: string, local: string) => name === local ? LOCAL : name;

/** A stored list of locations (null: a default) as the API shows it. */
export const shownLocations = (stored: readonly string[] | null, local: string) =>
  stored === null ? null : stored.map((s) => shownLocation(s, local));

/**
 * Moves on with every token rotated and location deleted on `db`: the edge's cache of what a
 * token names (`locationOfToken`) is keyed by it, so an old token stops at once in this process
 * (and within the cache's few seconds in the others).
 */
const versions = new WeakMap<Db, number>();
export const locationTokensVersion = (db: Db) => versions.get(db) ?? 0;
const tokensChanged = (db: Db) =>
  afterCommit(db, (root) => versions.set(root, locationTokensVersion(root) + 1));

/** The remote location whose token this is, or null. */
export async function locationOfToken(db: Db, token: string): Promise<string | null> {
  const row = await db.selectFrom("locations").select("name")
    .where("token_sha256", "=", tokenDigest(token)).executeTakeFirst();
  return row?.name ?? null;
}

export const tokenDigest = sha256Hex;

function newToken(): { token: string; digest: string } {
  const { secret, digest } = newSecret(LOCATION_TOKEN_PREFIX);
  return { token: secret, digest };
}

/**
 * The stored form of location names given in a write, each checked: an unknown name is a 422
 * naming the field (`path`, such as `locations`) and the entry.
 */
export async function storedLocations(
  db: Db,
  names: readonly string[] | null | undefined,
  { local, path }: { local: string; path: string },
): Promise<string[] | null | undefined> {
  if (names === undefined || names === null) return names;
  const remote = names.filter((n) => n !== local);
  // Locked for share until the write's transaction ends: a delete of the location waits for it
  // (and then finds the probe naming it), rather than leaving a probe naming no location.
  const known = remote.length === 0 ? [] : await db.selectFrom("locations").select("name")
    .where("name", "in", remote).forShare().execute();
  const knownNames = new Set(known.map((r) => r.name));
  const unknown = names.flatMap((name, i) =>
    name === local || knownNames.has(name)
      ? []
      : [{ path: `${path}.${i}`, message: `no location is named "${name}" (GET /locations)` }]
  );
  if (unknown.length > 0) throw new DomainError("validation_failed", "Validation failed", unknown);
  return names.map((n) => storedLocation(n, local));
}

/**
 * Where a probe runs, as stored: its own `locations`, else its project's `default_locations`,
 * else the built-in location. `probe` and `project` are the aliases of `probes` and `projects`.
 */
export const effectiveLocationsSql = (probe: string, project: string) =>
  sql`coalesce(${sql.ref(`${probe}.locations`)}, ${sql.ref(`${project}.default_locations`)},
    array['']::text[])`;

/**
 * Says a runner of `location` ('' for the built-in one) was seen now, with its version: the
 * built-in runners every 15 s, a remote one with each claim and post. A remote runner's name is
 * its own choice, so one counts among its location's runners only once the service has handed it
 * runs (`runnerHanded`): until then its sightings change nothing, and names a token makes up
 * leave no row.
 */
export async function runnerSeen(
  db: Db,
  location: string,
  who: { runner: string; version: string },
): Promise<void> {
  if (location === LOCAL) return await runnerHanded(db, location, who);
  await sql`
    update location_runners set version = ${who.version}, last_seen_at = now()
    where location = ${location} and runner = ${who.runner}`.execute(db);
}

/** Says the service handed runs to a runner of `location`: it is seen, and counts from now on. */
export async function runnerHanded(
  db: Db,
  location: string,
  { runner, version }: { runner: string; version: string },
): Promise<void> {
  await sql`
    insert into location_runners (location, runner, version)
    values (${location}, ${runner}, ${version})
    on conflict (location, runner) do update
      set version = excluded.version, last_seen_at = now()`.execute(db);
}

/** What a location's runners are doing, from their last sightings and the last minute's runs. */
interface Activity {
  runners: number;
  last_seen_at: string | null;
  version: string | null;
  checks_per_minute: number;
  lag_seconds: number;
}

/**
 * Each stored location's activity (`only`: one); its runs per minute those of the `visible`
 * projects' probes when given (its runners and their versions are the location's own).
 */
async function activityOf(
  db: Db,
  only?: string,
  visible?: Visible,
): Promise<Map<string, Activity>> {
  const where = only === undefined ? sql`` : sql`where location = ${only}`;
  const { rows: seenRows } = await sql<{
    location: string;
    runners: number | string;
    last_seen_at: Date | string | null;
    version: string | null;
  }>`
    select location,
      count(*) filter (where last_seen_at > now() - interval '1 minute') as runners,
      max(last_seen_at) as last_seen_at,
      (array_agg(version order by last_seen_at desc))[1] as version
    from location_runners ${where} group by location`.execute(db);
  const ofVisible = visible === undefined
    ? sql``
    : sql`and probe_key = any(array(select key from probes where ${among("project", visible)}))`;
  const { rows: runs } = await sql<{ location: string; checks: number | string }>`
    select location, count(*) as checks from probe_results
    where started_at > now() - interval '1 minute'
      ${only === undefined ? sql`` : sql`and location = ${only}`} ${ofVisible}
    group by location`.execute(db);
  const checks = new Map(runs.map((r) => [r.location, Number(r.checks)]));
  const activity = new Map<string, Activity>();
  for (const r of seenRows) {
    activity.set(r.location, {
      runners: Number(r.runners),
      last_seen_at: isoOrNull(r.last_seen_at),
      version: r.version,
      checks_per_minute: checks.get(r.location) ?? 0,
      lag_seconds: 0,
    });
  }
  for (const [location, n] of checks) {
    if (!activity.has(location)) activity.set(location, { ...idle(), checks_per_minute: n });
  }
  return activity;
}

const idle = (): Activity => ({
  runners: 0,
  last_seen_at: null,
  version: null,
  checks_per_minute: 0,
  lag_seconds: 0,
});

const isoOrNull = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * Probes per stored location: their own `locations`, or their project's default; of the `visible`
 * projects when given.
 */
async function probeCounts(db: Db, only?: string, visible?: Visible): Promise<Map<string, number>> {
  const { rows } = await sql<{ location: string; probes: number | string }>`
    select l.location, count(*) as probes
    from probes p
    join projects pr on pr.name = p.project
    cross join lateral unnest(${effectiveLocationsSql("p", "pr")}) as l(location)
    where ${only === undefined ? sql`true` : sql`l.location = ${only}`}
      and ${among("p.project", visible)}
    group by l.location`.execute(db);
  return new Map(rows.map((r) => [r.location, Number(r.probes)]));
}

interface LocationRow {
  name: string;
  label: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

interface Figures {
  counts: Map<string, number>;
  activity: Map<string, Activity>;
  lags: Map<string, number>;
}

/**
 * Probe counts, runner activity and schedule lag of every location (`only`: one); the probes and
 * runs counted those of the `visible` projects when given.
 */
async function figuresOf(db: Db, only?: string, visible?: Visible): Promise<Figures> {
  const counts = await probeCounts(db, only, visible);
  const activity = await activityOf(db, only, visible);
  const names = only === undefined
    ? [LOCAL, ...(await db.selectFrom("locations").select("name").execute()).map((r) => r.name)]
    : [only];
  const lags = new Map<string, number>();
  for (const name of names) lags.set(name, await scheduleLag({ db, location: name }));
  return { counts, activity, lags };
}

function remoteOf(row: LocationRow, f: Figures): Location {
  return {
    name: row.name,
    label: row.label,
    kind: "remote",
    created_at: isoOrNull(row.created_at),
    updated_at: isoOrNull(row.updated_at),
    probes: f.counts.get(row.name) ?? 0,
    ...(f.activity.get(row.name) ?? idle()),
    lag_seconds: f.lags.get(row.name) ?? 0,
  };
}

function localOf(local: string, f: Figures): Location {
  return {
    name: local,
    label: null,
    kind: "local",
    created_at: null,
    updated_at: null,
    probes: f.counts.get(LOCAL) ?? 0,
    ...(f.activity.get(LOCAL) ?? idle()),
    lag_seconds: f.lags.get(LOCAL) ?? 0,
  };
}

const noFigures = (): Figures => ({ counts: new Map(), activity: new Map(), lags: new Map() });

const rowColumns = ["name", "label", "created_at", "updated_at"] as const;

/** Every location: the built-in one first, then the remote ones by name (bytewise). */
export async function listLocations(
  { db, names, visible }: { db: Db; names?: LocationNames; visible?: Visible },
): Promise<Location[]> {
  const local = localNameOf(names);
  const rows = await db.selectFrom("locations").select(rowColumns)
    .orderBy(sql`name collate "C"`).execute();
  const figures = await figuresOf(db, undefined, visible);
  return [localOf(local, figures), ...rows.map((r) => remoteOf(r, figures))];
}

export async function getLocation(
  { db, location, names, visible }: {
    db: Db;
    location: string;
    names?: LocationNames;
    visible?: Visible;
  },
): Promise<Location> {
  const local = localNameOf(names);
  if (location === local) return localOf(local, await figuresOf(db, LOCAL, visible));
  const row = await db.selectFrom("locations").select(rowColumns).where("name", "=", location)
    .executeTakeFirst();
  if (!row) throw notFound("Location");
  return remoteOf(row, await figuresOf(db, location, visible));
}

const builtIn = (local: string) =>
  new DomainError("conflict", `"${local}" is the built-in location: it cannot be changed`);

/** Creates a remote location; its token is in this answer only. */
export async function createLocation(
  { db, input, names }: { db: Db; input: LocationCreateInput; names?: LocationNames },
): Promise<Location & { token: string }> {
  const local = localNameOf(names);
  if (input.name === local) {
    throw new DomainError("conflict", `"${local}" is the built-in location's name`);
  }
  const { token, digest } = newToken();
  try {
    const row = await db.insertInto("locations")
      .values({ name: input.name, label: input.label ?? null, token_sha256: digest })
      .onConflict((oc) => oc.column("name").doNothing())
      .returning(rowColumns).executeTakeFirst();
    if (!row) throw new DomainError("conflict", "Location already exists");
    return { ...remoteOf(row, noFigures()), token };
  } catch (error) {
    if (isUniqueViolation(error)) throw new DomainError("conflict", "Location already exists");
    throw error;
  }
}

export async function updateLocation(
  { db, input, names }: { db: Db; input: LocationPatchInput; names?: LocationNames },
): Promise<Location> {
  const { location, ...fields } = input;
  if (Object.keys(fields).length === 0) throw noFieldsProvided();
  const local = localNameOf(names);
  if (location === local) throw builtIn(local);
  const row = await db.updateTable("locations")
    .set({ ...(fields.label !== undefined && { label: fields.label }), updated_at: sql`now()` })
    .where("name", "=", location).returning(rowColumns).executeTakeFirst();
  if (!row) throw notFound("Location");
  return remoteOf(row, await figuresOf(db, location));
}

/** Replaces a remote location's token: the old one stops at once; the new one is answered. */
export async function rotateLocationToken(
  { db, location, names }: { db: Db; location: string; names?: LocationNames },
): Promise<Location & { token: string }> {
  const local = localNameOf(names);
  if (location === local) throw builtIn(local);
  const { token, digest } = newToken();
  const row = await db.updateTable("locations")
    .set({ token_sha256: digest, updated_at: sql`now()` })
    .where("name", "=", location).returning(rowColumns).executeTakeFirst();
  if (!row) throw notFound("Location");
  tokensChanged(db);
  return { ...remoteOf(row, await figuresOf(db, location)), token };
}

/**
 * Deletes a remote location that no probe and no project's default names (409 otherwise: move
 * them elsewhere first), with its schedules; its results are kept until the retention.
 */
export function deleteLocation(
  { db, location, names }: { db: Db; location: string; names?: LocationNames },
): Promise<{ name: string; deleted: boolean }> {
  const local = localNameOf(names);
  if (location === local) return Promise.reject(builtIn(local));
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("locations").select("name").where("name", "=", location)
      .forUpdate().executeTakeFirst();
    if (!row) throw notFound("Location");
    const { rows: [use] } = await sql<{ probes: number | string; projects: number | string }>`
      select
        (select count(*) from probes where ${location} = any(locations)) as probes,
        (select count(*) from projects where ${location} = any(default_locations)) as projects`
      .execute(trx);
    if (Number(use.probes) > 0 || Number(use.projects) > 0) {
      throw new DomainError(
        "conflict",
        `Location is in use by ${use.probes} probe(s) and the default of ${use.projects} ` +
          "project(s): give them other locations first",
      );
    }
    await sql`
      with locked as (
        select probe_key from probe_schedule where location = ${location}
        order by probe_key for update
      )
      delete from probe_schedule s using locked
      where s.probe_key = locked.probe_key and s.location = ${location}`.execute(trx);
    await trx.deleteFrom("locations").where("name", "=", location).execute();
    tokensChanged(db);
    return { name: location, deleted: true };
  });
}
