/**
 * Public status pages: each project's settings (private until made public), and what its page
 * shows — every probe's state and 90 days of daily uptime from the hourly rollups, and recent
 * incidents reduced to their probe's name, state and times. Nothing on a page carries an error
 * text or an address, and URLs only when the owner chose to show them.
 *
 * @module
 */
import {
  type LocationStates,
  type PublicStatusPage,
  STATUS_PAGE_DAYS,
  STATUS_PAGE_INCIDENTS,
  type StatusPageDay,
  type StatusPagePatchInput,
  statusPagePaths,
  type StatusPageSettings,
} from "@probe/shared";
import { sql } from "kysely";
import { displayLabel } from "../alerting/incidents.ts";
import type { Db } from "../storage/database.ts";
import { afterCommit } from "../storage/joined.ts";
import type { ProbeState } from "../storage/schema.ts";
import { json } from "../storage/json.ts";
import { DomainError, noFieldsProvided, notFound } from "./errors.ts";
import { isInMaintenance } from "./maintenance.ts";
import { effectivePolicy } from "./alerts.ts";
import { HEARTBEAT_SCHEME, isHeartbeatUrl } from "../storage/heartbeat_url.ts";

/** Each location's state, by name, from a verdict's summary (stale ones are unknown). */
function locationListOf(l: LocationStates | null): { location: string; state: ProbeState }[] {
  if (!l) return [];
  const states = ["down", "degraded", "up", "unknown"] as const;
  return states.flatMap((state) => l[state].map((location) => ({ location, state })))
    .sort((a, b) => a.location < b.location ? -1 : a.location > b.location ? 1 : 0);
}

const DAY_MS = 86_400_000;

/**
 * What a page shows as a probe's URL: a heartbeat's (`heartbeat://<name>`, a URL nothing answers)
 * as the words `heartbeat <name>`; its ping URL, which holds its secret token, never.
 */
const shownUrl = (url: string) =>
  isHeartbeatUrl(url) ? `heartbeat ${url.slice(HEARTBEAT_SCHEME.length)}` : displayLabel(null, url);
const iso = (value: Date | string | null) => value === null ? null : new Date(value).toISOString();

/** States from the best to the worst: a page's (and a project badge's) status is its worst. */
const SEVERITY: Record<ProbeState, number> = { up: 0, unknown: 1, degraded: 2, down: 3 };

/** The worst of some states; `unknown` for none. */
export function worstState(states: Iterable<ProbeState>): ProbeState {
  let worst: ProbeState | null = null;
  for (const state of states) {
    if (worst === null || SEVERITY[state] > SEVERITY[worst]) worst = state;
  }
  return worst ?? "unknown";
}

/**
 * Settings change far less often than pages are read: callers that keep pages for a while
 * compare this number, which every change of a status page's settings on `db` moves on, to
 * the one they read the page under (`server/edge/status_page.ts`).
 */
const versions = new WeakMap<Db, number>();
export const statusPagesVersion = (db: Db): number => versions.get(db) ?? 0;

async function projectExists(db: Db, project: string, lock = false): Promise<void> {
  let query = db.selectFrom("projects").select("name").where("name", "=", project);
  // Held until the transaction ends, so the project cannot be deleted under the write.
  if (lock) query = query.forShare();
  if (!(await query.executeTakeFirst())) throw notFound("Project");
}

/** A project's status page settings (the defaults when never set); 404 for a missing project. */
export async function getStatusPage(
  { db, project }: { db: Db; project: string },
): Promise<StatusPageSettings> {
  const row = await db.selectFrom("projects")
    .leftJoin("status_pages", "status_pages.project", "projects.name")
    .select([
      "status_pages.public",
      "status_pages.title",
      "status_pages.description",
      "status_pages.show_urls",
      "status_pages.show_locations",
      "status_pages.probe_ids",
      (eb) => eb.ref("status_pages.updated_at").$castTo<Date | string | null>().as("updated_at"),
    ])
    .where("projects.name", "=", project).executeTakeFirst();
  if (!row) throw notFound("Project");
  return {
    project,
    public: row.public ?? false,
    title: row.title,
    description: row.description,
    show_urls: row.show_urls ?? false,
    show_locations: row.show_locations ?? false,
    probe_ids: row.probe_ids ?? null,
    ...statusPagePaths(project),
    updated_at: iso(row.updated_at),
  };
}

/** Each of `ids` names a probe of the project, once; 422 naming the entries that do not. */
async function checkProbeIds(db: Db, project: string, ids: readonly string[]): Promise<void> {
  const found = ids.length === 0 ? [] : await db.selectFrom("probes").select("probe_id")
    .where("project", "=", project).where("probe_id", "in", [...new Set(ids)]).execute();
  const known = new Set(found.map((row) => row.probe_id));
  const details = ids.flatMap((id, i) =>
    !known.has(id)
      ? [{ path: `probe_ids.${i}`, message: `no probe of ${project} has the id ${id}` }]
      : ids.indexOf(id) !== i
      ? [{ path: `probe_ids.${i}`, message: `${id} is named twice` }]
      : []
  );
  if (details.length) throw new DomainError("validation_failed", "Validation failed", details);
}

/** Changes some of a project's status page settings; the others keep their values. */
export async function updateStatusPage(
  { db, input }: { db: Db; input: StatusPagePatchInput },
): Promise<StatusPageSettings> {
  const { project, ...fields } = input;
  const changes = Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as Omit<StatusPagePatchInput, "project">;
  if (Object.keys(changes).length === 0) throw noFieldsProvided();
  await db.transaction().execute(async (trx) => {
    await projectExists(trx, project, true);
    if (changes.probe_ids) await checkProbeIds(trx, project, changes.probe_ids);
    await trx.insertInto("status_pages")
      .values({ project, ...changes })
      .onConflict((oc) => oc.column("project").doUpdateSet({ ...changes, updated_at: sql`now()` }))
      .execute();
  });
  afterCommit(db, (root) => versions.set(root, statusPagesVersion(root) + 1));
  return await getStatusPage({ db, project });
}

interface DayCounts {
  up: number;
  degraded: number;
  down: number;
  blocked: number;
  maintenance: number;
}

/** A day's runs: blocked ones (never tried, the network policy refused the target) left out. */
const counted = (c: DayCounts) => c.up + c.degraded + c.down;
const passing = (c: DayCounts) => c.up + c.degraded;
const dateOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** How the project's incidents open and close: its alert policy's two thresholds. */
async function incidentRule(db: Db, project: string) {
  const policy = await effectivePolicy(db, project);
  return { failures: policy.failure_threshold, passes: policy.success_threshold };
}

/** Each shown probe's run counts per UTC day since `firstDay`, from the hourly rollups. */
async function dayCountsOf(
  trx: Db,
  ofProject: ReturnType<typeof sql>,
  firstDay: number,
): Promise<Map<string, Map<number, DayCounts>>> {
  const { rows } = await sql<{ probe_key: string | number; day: number } & DayCounts>`
    select probe_key, floor(extract(epoch from hour) / 86400)::int as day,
           sum(up)::int as up, sum(degraded)::int as degraded, sum(down)::int as down,
           sum(blocked)::int as blocked, sum(maintenance)::int as maintenance
    from probe_rollups
    where probe_key in ${ofProject} and hour >= ${new Date(firstDay * DAY_MS)}
    group by 1, 2`.execute(trx);
  const daysOf = new Map<string, Map<number, DayCounts>>();
  for (const { probe_key, day, ...counts } of rows) {
    const key = String(probe_key);
    if (!daysOf.has(key)) daysOf.set(key, new Map());
    daysOf.get(key)!.set(Number(day), counts);
  }
  return daysOf;
}

/** A probe's days from `firstDay` to `today` as the page shows them, and its uptime over them. */
function daysShown(
  counts: Map<number, DayCounts> = new Map(),
  firstDay: number,
  today: number,
): { uptime: number | null; days: StatusPageDay[] } {
  const days: StatusPageDay[] = [];
  let runs = 0;
  let passed = 0;
  for (let day = firstDay; day <= today; day++) {
    const c = counts.get(day);
    const n = c ? counted(c) : 0;
    runs += n;
    passed += c ? passing(c) : 0;
    days.push({
      date: dateOf(day),
      runs: n,
      uptime: n === 0 ? null : passing(c!) / n,
      maintenance: c?.maintenance ?? 0,
    });
  }
  return { uptime: runs === 0 ? null : passed / runs, days };
}

/**
 * What the public page of `project` shows at `now`, or null when the project does not exist or
 * its page is not public: the two are told apart by no one outside.
 */
export function publicStatusPage(
  { db, project, now = Date.now() }: { db: Db; project: string; now?: number },
): Promise<PublicStatusPage | null> {
  return db.transaction().setIsolationLevel("repeatable read").execute(async (trx) => {
    const page = await trx.selectFrom("projects")
      .innerJoin("status_pages", "status_pages.project", "projects.name")
      .select([
        "projects.label",
        "status_pages.title",
        "status_pages.description",
        "status_pages.show_urls",
        "status_pages.show_locations",
        "status_pages.probe_ids",
      ])
      .where("projects.name", "=", project).where("status_pages.public", "=", true)
      .executeTakeFirst();
    if (!page) return null;

    const all = await trx.selectFrom("probes")
      .leftJoin("probe_verdicts", "probe_verdicts.probe_key", "probes.key")
      .select([
        "probes.key",
        "probes.probe_id",
        "probes.url",
        "probes.label",
        "probe_verdicts.state",
        "probe_verdicts.state_since",
        "probe_verdicts.locations",
        "probe_verdicts.flapping_since",
      ])
      .where("probes.project", "=", project)
      .orderBy("probes.key")
      .execute();
    // The probes the page names, in its order (those gone since are skipped), or every one.
    const byId = new Map(all.map((probe) => [probe.probe_id, probe]));
    const probes = page.probe_ids === null
      ? all
      : page.probe_ids.flatMap((id) => byId.get(id) ?? []);
    const shownKeys = probes.map((probe) => String(probe.key));

    // Days are UTC days; rollups are hourly, so each falls in one day whole.
    const today = Math.floor(now / DAY_MS);
    const firstDay = today - STATUS_PAGE_DAYS + 1;
    const ofProject = sql`(select x.k from json_to_recordset(${
      json(shownKeys.map((k) => ({ k })))
    }) as x(k bigint))`;
    const daysOf = await dayCountsOf(trx, ofProject, firstDay);

    const incidents = await trx.selectFrom("incidents")
      .select(["probe_key", "started_at", "resolved_at"])
      .where("project", "=", project)
      .where(sql<boolean>`probe_key in ${ofProject}`)
      .where((eb) =>
        eb.or([
          eb("resolved_at", "is", null),
          eb("started_at", ">=", new Date(firstDay * DAY_MS)),
        ])
      )
      .orderBy("started_at", "desc").orderBy("id", "desc")
      .limit(STATUS_PAGE_INCIDENTS)
      .execute();

    const names = new Map<string, string>();
    const shown = probes.map((probe, i) => {
      const url = page.show_urls ? shownUrl(probe.url) : null;
      const name = probe.label ?? url ?? `Check ${i + 1}`;
      names.set(String(probe.key), name);
      const { uptime, days } = daysShown(daysOf.get(String(probe.key)), firstDay, today);
      return {
        name,
        url,
        state: probe.state ?? "unknown",
        state_since: iso(probe.state_since ?? null),
        ...(probe.flapping_since && { flapping: true as const }),
        // Location names are the owner's own words for their places: shown only when chosen.
        locations: page.show_locations
          ? locationListOf(probe.locations as LocationStates | null)
          : [],
        uptime,
        days,
      };
    });

    return {
      project,
      title: page.title ?? page.label ?? project,
      description: page.description,
      status: worstState(shown.map((p) => p.state)),
      in_maintenance: await isInMaintenance(trx, project, new Date(now)),
      incident_rule: await incidentRule(trx, project),
      generated_at: new Date(now).toISOString(),
      probes: shown,
      incidents: incidents.map((row) => {
        const started = new Date(row.started_at);
        const resolved = row.resolved_at === null ? null : new Date(row.resolved_at);
        return {
          probe: names.get(String(row.probe_key))!,
          state: resolved ? "resolved" as const : "open" as const,
          started_at: started.toISOString(),
          resolved_at: iso(resolved),
          duration_seconds: resolved
            ? Math.round((resolved.getTime() - started.getTime()) / 1000)
            : null,
        };
      }),
    };
  });
}
