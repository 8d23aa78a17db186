import type {
  Probe,
  ProbeCreateInput,
  ProbePatchInput,
  ProbeRef,
  ProbeWritten,
} from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import { prepared } from "../db/prepared.ts";
import { json } from "../db/json.ts";
import { DomainError, isUniqueViolation, noFieldsProvided, notFound } from "./errors.ts";
import {
  decodeCursor,
  notACursor,
  type Page,
  pageOf,
  type PageRequest,
  rowsToRead,
} from "./pages.ts";
import { probeIdOf } from "./probe_id.ts";

/** The columns a probe is read with: exactly the fields of the `probe` schema. */
export const probeColumns = [
  "project",
  "probe_id",
  "url",
  "method",
  "headers",
  "body",
  "latency",
] as const;

type Definition = Pick<Probe, "url" | "method" | "headers" | "body" | "latency">;

function definitionColumns(d: Definition) {
  return {
    probe_id: probeIdOf(d.method, d.url),
    url: d.url,
    method: d.method,
    headers: json(d.headers),
    body: d.body === null ? null : json(d.body),
    latency: d.latency,
  };
}

/**
 * Creates a probe, or rewrites the one the project already has for that URL: the whole
 * definition is replaced, and fields not sent take their defaults. The project row is locked
 * for share so that a concurrent delete of the project cannot leave this probe behind.
 */
export function createProbe(
  { db, input }: { db: Db; input: ProbeCreateInput },
): Promise<{ probe: ProbeWritten; created: boolean }> {
  const columns = definitionColumns({
    url: input.url,
    method: input.method ?? "GET",
    headers: input.headers ?? {},
    body: input.body ?? null,
    latency: input.latency ?? null,
  });
  return db.transaction().execute(async (trx) => {
    const project = await trx.selectFrom("projects").select("name")
      .where("name", "=", input.project).forShare().executeTakeFirst();
    if (!project) throw notFound("Project");
    const row = await trx
      .insertInto("probes")
      .values({ project: input.project, ...columns })
      .onConflict((oc) =>
        oc.columns(["project", "url"]).doUpdateSet({
          probe_id: (eb) => eb.ref("excluded.probe_id"),
          method: (eb) => eb.ref("excluded.method"),
          headers: (eb) => eb.ref("excluded.headers"),
          body: (eb) => eb.ref("excluded.body"),
          latency: (eb) => eb.ref("excluded.latency"),
          updated_at: sql`now()`,
        })
      )
      .returning(["project", "url", "probe_id", sql<boolean>`xmax = 0`.as("inserted")])
      .executeTakeFirstOrThrow();
    const { inserted, ...probe } = row;
    return { probe, created: inserted };
  });
}

/** Lists probes ordered by project, then URL; optionally those of one project only. */
/** Probes ordered by project and URL (bytewise), of all projects or of one; a page of them. */
export async function listProbes(
  { db, project, page = {} }: { db: Db; project?: string; page?: PageRequest },
): Promise<Page<Probe>> {
  let query = db.selectFrom("probes").select(probeColumns);
  // Conditions the index (`probes_list_idx`) can start a page at: bytewise, as it is ordered.
  if (project !== undefined) query = query.where(sql`project collate "C"`, "=", project);
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
  const rows = await query.orderBy(sql`project collate "C"`).orderBy(sql`url collate "C"`)
    .limit(rowsToRead(page)).execute() as Probe[];
  return pageOf(rows, page, (row) => [row.project, row.url], "probes");
}

const probeAt = prepared((db, project: string, probeId: string) =>
  db.selectFrom("probes").select(probeColumns)
    .where("project", "=", project).where("probe_id", "=", probeId)
);

export async function getProbe({ db, ref }: { db: Db; ref: ProbeRef }): Promise<Probe> {
  const [row] = await probeAt(db, ref.project, ref.probeId);
  if (!row) throw notFound("Probe");
  return row as Probe;
}

const urlTaken = () =>
  new DomainError("validation_failed", "Validation failed", [
    { path: "url", message: "another probe of this project already has this URL" },
  ]);

/**
 * Rewrites a probe with the fields supplied; its probe_id follows its method and URL. The row
 * keeps its internal key, so whatever hangs off the probe follows it to the new id.
 */
export function updateProbe(
  { db, input }: { db: Db; input: ProbePatchInput },
): Promise<ProbeWritten> {
  const { project, probeId, ...fields } = input;
  if (Object.keys(fields).length === 0) throw noFieldsProvided();
  return db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom("probes").select(["key", ...probeColumns])
      .where("project", "=", project).where("probe_id", "=", probeId)
      .forUpdate().executeTakeFirst();
    if (!current) throw notFound("Probe");
    const next: Definition = {
      url: fields.url ?? current.url,
      method: (fields.method ?? current.method) as Probe["method"],
      headers: fields.headers ?? current.headers,
      body: fields.body !== undefined ? fields.body : current.body,
      latency: fields.latency !== undefined ? fields.latency : current.latency,
    };
    if (next.url !== current.url) {
      const other = await trx.selectFrom("probes").select("key")
        .where("project", "=", project).where("url", "=", next.url).executeTakeFirst();
      if (other) throw urlTaken();
    }
    try {
      const row = await trx.updateTable("probes")
        .set({ ...definitionColumns(next), updated_at: sql`now()` })
        .where("key", "=", current.key)
        .returning(["project", "url", "probe_id"])
        .executeTakeFirstOrThrow();
      return row;
    } catch (error) {
      if (isUniqueViolation(error)) throw urlTaken();
      throw error;
    }
  });
}

export async function deleteProbe({ db, ref }: { db: Db; ref: ProbeRef }): Promise<void> {
  const row = await db.deleteFrom("probes")
    .where("project", "=", ref.project).where("probe_id", "=", ref.probeId)
    .returning("key").executeTakeFirst();
  if (!row) throw notFound("Probe");
}
