/**
 * Badge tokens: unguessable tokens (32 random bytes, base64url) that serve the badges of one
 * probe or of a whole project and nothing else. A token is looked up by its SHA-256 digest and
 * kept beside it, answered on every read so its snippet can be copied again (it reveals only
 * its badge; tokens made before were kept as digests only: null until rotated). Rotating
 * replaces both and the old token finds nothing from then on. And what badges show: a state, an uptime, a p95 latency.
 *
 * @module
 */
import {
  type Badge,
  type BadgeCreateInput,
  type BadgeRef,
  badgeUrlsOf,
  type BadgeWindow,
  type BadgeWithToken,
  MAX_BADGES_PER_PROJECT,
  PROBE_INTERVAL_SECONDS,
  STATS_WINDOW_MS,
} from "@probe/shared";
import { createHash } from "node:crypto";
import { type RawBuilder, sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { afterCommit } from "../storage/joined.ts";
import type { ProbeState } from "../storage/schema.ts";
import { percentileOf } from "./histogram.ts";
import { DomainError, notFound } from "./errors.ts";
import { ceilHour, latencyHistogramSince } from "./results.ts";
import { worstState } from "./status_pages.ts";
import { HEARTBEAT_SCHEME, isHeartbeatUrl } from "../storage/heartbeat_url.ts";

const TOKEN_BYTES = 32;
/** What a token looks like: 32 bytes in base64url without padding. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** Badge ids are positive bigints: anything else names no badge. */
const BADGE_ID = /^[1-9][0-9]{0,18}$/;
const MAX_BIGINT = 2n ** 63n - 1n;

const badgeNotFound = () => new DomainError("not_found", "Badge not found");
const iso = (value: Date | string | null) => value === null ? null : new Date(value).toISOString();

/**
 * Moves on with every token rotated or deleted on `db`: callers that keep what a token resolved
 * to compare it with the number they read it under, so an old token stops at once here.
 */
const versions = new WeakMap<Db, number>();
export const badgeTokensVersion = (db: Db): number => versions.get(db) ?? 0;
const tokensChanged = (db: Db) =>
  afterCommit(db, (root) => versions.set(root, badgeTokensVersion(root) + 1));

function newToken(): { token: string; digest: string } {
  const bytes = crypto.getRandomValues(new Uint8Array(TOKEN_BYTES));
  const token = btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
  return { token, digest: digestOf(token) };
}

const digestOf = (token: string) => createHash("sha256").update(token).digest("hex");

interface BadgeRow {
  id: number | string;
  project: string;
  probe_key: number | string | null;
  probe_id: string | null;
  created_at: Date | string;
  rotated_at: Date | string | null;
  token: string | null;
}

function badgeOf(row: BadgeRow): Badge {
  return {
    id: String(row.id),
    project: row.project,
    scope: row.probe_key === null ? "project" : "probe",
    probe_id: row.probe_id,
    created_at: iso(row.created_at)!,
    rotated_at: iso(row.rotated_at),
    token: row.token,
    urls: row.token === null ? null : badgeUrlsOf(row.token),
  };
}

function selectBadges(db: Db) {
  return db.selectFrom("badge_tokens")
    .leftJoin("probes", "probes.key", "badge_tokens.probe_key")
    .select([
      "badge_tokens.id",
      "badge_tokens.project",
      "badge_tokens.probe_key",
      "probes.probe_id",
      (eb) => eb.ref("badge_tokens.created_at").$castTo<Date | string>().as("created_at"),
      "badge_tokens.rotated_at",
      "badge_tokens.token",
    ]);
}

/** A project's badge tokens, oldest first, with the tokens; 404 for a missing project. */
export async function listBadges({ db, project }: { db: Db; project: string }): Promise<Badge[]> {
  const exists = await db.selectFrom("projects").select("name").where("name", "=", project)
    .executeTakeFirst();
  if (!exists) throw notFound("Project");
  const rows = await selectBadges(db).where("badge_tokens.project", "=", project)
    .orderBy("badge_tokens.id").execute();
  return rows.map(badgeOf);
}

/**
 * Makes a token for a probe's badges (with `probe_id`) or the project's. At most
 * `MAX_BADGES_PER_PROJECT` per project, counted under the project row's lock.
 */
export async function createBadge(
  { db, input }: { db: Db; input: BadgeCreateInput },
): Promise<BadgeWithToken> {
  const { token, digest } = newToken();
  const id = await db.transaction().execute(async (trx) => {
    // The project row first, then the probe's: the order a project delete locks them in.
    const project = await trx.selectFrom("projects").select("name")
      .where("name", "=", input.project).forShare().executeTakeFirst();
    if (!project) throw notFound("Project");
    let probeKey: string | null = null;
    if (input.probe_id !== undefined) {
      const probe = await trx.selectFrom("probes").select("key")
        .where("project", "=", input.project).where("probe_id", "=", input.probe_id)
        .executeTakeFirst();
      if (!probe) {
        throw new DomainError("validation_failed", "Validation failed", [
          { path: "probe_id", message: "is not a probe of this project" },
        ]);
      }
      probeKey = String(probe.key);
    }
    const { count } = await trx.selectFrom("badge_tokens")
      .select((eb) => eb.fn.countAll<number | string>().as("count"))
      .where("project", "=", input.project).executeTakeFirstOrThrow();
    if (Number(count) >= MAX_BADGES_PER_PROJECT) {
      throw new DomainError(
        "conflict",
        `A project holds at most ${MAX_BADGES_PER_PROJECT} badge tokens`,
      );
    }
    const row = await trx.insertInto("badge_tokens")
      .values({ project: input.project, probe_key: probeKey, token_sha256: digest, token })
      .returning("id").executeTakeFirstOrThrow();
    return String(row.id);
  });
  return { ...await readBadge(db, input.project, id), token, urls: badgeUrlsOf(token) };
}

async function readBadge(db: Db, project: string, id: string): Promise<Badge> {
  const row = await selectBadges(db).where("badge_tokens.project", "=", project)
    .where("badge_tokens.id", "=", id).executeTakeFirst();
  if (!row) throw badgeNotFound();
  return badgeOf(row);
}

function idOf(id: string): string {
  if (!BADGE_ID.test(id) || BigInt(id) > MAX_BIGINT) throw badgeNotFound();
  return id;
}

/** Gives a badge a new token: the old one serves nothing from now on. */
export async function rotateBadge(
  { db, ref }: { db: Db; ref: BadgeRef },
): Promise<BadgeWithToken> {
  const { token, digest } = newToken();
  const row = await db.updateTable("badge_tokens")
    .set({ token_sha256: digest, token, rotated_at: sql`now()` })
    .where("project", "=", ref.project).where("id", "=", idOf(ref.id))
    .returning("id").executeTakeFirst();
  tokensChanged(db);
  if (!row) throw badgeNotFound();
  return { ...await readBadge(db, ref.project, ref.id), token, urls: badgeUrlsOf(token) };
}

/** Deletes a badge token; 404 when the project holds no such badge. */
export async function deleteBadge({ db, ref }: { db: Db; ref: BadgeRef }): Promise<void> {
  const row = await db.deleteFrom("badge_tokens")
    .where("project", "=", ref.project).where("id", "=", idOf(ref.id))
    .returning("id").executeTakeFirst();
  tokensChanged(db);
  if (!row) throw badgeNotFound();
}

/** What a token serves: a probe of a project, or the whole project. */
export interface BadgeScope {
  project: string;
  /** The probe's internal key; null for a project's token. */
  probeKey: string | null;
  /** The probe is a heartbeat's: its runs' durations are run times, not latencies. */
  heartbeat?: boolean;
}

/** The scope of a token, or null for anything that is not a current token. */
export async function resolveBadgeToken(
  { db, token }: { db: Db; token: string },
): Promise<BadgeScope | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const row = await db.selectFrom("badge_tokens")
    .leftJoin("probes", "probes.key", "badge_tokens.probe_key")
    .select(["badge_tokens.project", "badge_tokens.probe_key", "probes.url"])
    .where("token_sha256", "=", digestOf(token)).executeTakeFirst();
  if (!row) return null;
  if (row.probe_key === null) return { project: row.project, probeKey: null };
  return {
    project: row.project,
    probeKey: String(row.probe_key),
    heartbeat: isHeartbeatUrl(row.url ?? ""),
  };
}

const keysOf = (scope: BadgeScope): RawBuilder<unknown> =>
  scope.probeKey === null
    ? sql`(select key from probes where project = ${scope.project})`
    : sql`(${scope.probeKey}::bigint)`;

/** `column` holds the key of one of the token's probes. */
const inScope = (column: string, scope: BadgeScope) =>
  sql<boolean>`${sql.ref(column)} in ${keysOf(scope)}`;

/** The state of a probe's token; for a project's, the worst of its probes (`unknown` for none). */
export async function badgeState(
  { db, scope }: { db: Db; scope: BadgeScope },
): Promise<ProbeState> {
  // A probe not yet scheduled has no schedule row: it is `unknown` too.
  const rows = await db.selectFrom("probes")
    .leftJoin("probe_verdicts", "probe_verdicts.probe_key", "probes.key")
    .select("probe_verdicts.state")
    .where(inScope("probes.key", scope)).execute();
  const states = rows.map((r) => r.state ?? "unknown");
  return worstState(states);
}

/** The first whole hour at or after `since`. */

/**
 * Uptime (0 to 1; null without counted runs) over the window ending at `now`, of all the
 * token's probes together: hourly rollups for whole hours, raw results for the part of the first
 * hour inside the window. Runs in maintenance windows and blocked runs are left out, as everywhere.
 *
 * Each run weighs as much as the time it stands for, its probe's interval (`interval_seconds`,
 * or `defaultIntervalSeconds` for probes without their own): so a probe run every 10 s counts as
 * much as one run every hour, not 360 times more. Probes of one interval weigh by their runs.
 */
export async function badgeUptime(
  { db, scope, window, now = Date.now(), defaultIntervalSeconds = PROBE_INTERVAL_SECONDS.default }:
    {
      db: Db;
      scope: BadgeScope;
      window: BadgeWindow;
      now?: number;
      /** `PROBE_INTERVAL_SECONDS`: the interval of probes without their own. */
      defaultIntervalSeconds?: number;
    },
): Promise<number | null> {
  const since = now - STATS_WINDOW_MS[window];
  const edge = new Date(ceilHour(since));
  const keys = keysOf(scope);
  const weight = sql`coalesce(p.interval_seconds, ${defaultIntervalSeconds}::int)::float8`;
  const { rows: [row] } = await sql<{ passed: number | null; runs: number | null }>`
    select sum(passed * w) as passed, sum(runs * w) as runs from (
      select r.up + r.degraded as passed, r.up + r.degraded + r.down as runs,
        ${weight} as w
      from probe_rollups r join probes p on p.key = r.probe_key
      where r.probe_key in ${keys} and r.hour >= ${edge}
      union all
      select (r.outcome in ('up', 'degraded'))::int, 1, ${weight}
      from probe_results r join probes p on p.key = r.probe_key
      where r.probe_key in ${keys} and not r.in_maintenance and r.outcome <> 'blocked'
        and r.started_at >= ${new Date(since)} and r.started_at < ${edge}
    ) c`.execute(db);
  const runs = Number(row?.runs ?? 0);
  return runs === 0 ? null : Number(row.passed) / runs;
}

/**
 * The p95 latency in ms over the window ending at `now`, of the runs of the token's probes that
 * got an HTTP response (null without any): estimated from the hourly histograms for whole hours
 * and counted from raw results for the part of the first hour inside the window, as the
 * statistics do once raw results are pruned.
 */
export async function badgeLatency(
  { db, scope, window, now = Date.now() }: {
    db: Db;
    scope: BadgeScope;
    window: BadgeWindow;
    now?: number;
  },
): Promise<number | null> {
  // A project's latency is its probes': its heartbeats' run times are another measure.
  const { histogram, max } = await latencyHistogramSince(
    db,
    (column) =>
      scope.probeKey === null
        ? sql<boolean>`${sql.ref(column)} in (select key from probes
            where project = ${scope.project} and url not like ${`${HEARTBEAT_SCHEME}%`})`
        : inScope(column, scope),
    now - STATS_WINDOW_MS[window],
  );
  return max === null ? null : percentileOf(histogram, 0.95, max);
}
