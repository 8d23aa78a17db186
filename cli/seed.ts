/**
 * A monitoring setup kept in version control: projects, their probes and the I'm alive settings
 * in a JSON or YAML file, loaded idempotently. Loading twice changes nothing the second time.
 */
import { isDeepStrictEqual } from "node:util";
import type { Probe, ProbeClient, Project } from "@probe/client";
import { ProbeApiError } from "@probe/client";
import {
  iamAlivePatchInput,
  probeHeaders,
  probeLatency,
  probeMethod,
  probeUrl,
  projectName,
  projectStatus,
} from "@probe/shared";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

const seedProbe = z.strictObject({
  url: probeUrl,
  method: probeMethod.optional(),
  headers: probeHeaders.optional(),
  body: z.unknown().optional(),
  latency: probeLatency.nullable().optional(),
});

const seedProject = z.strictObject({
  project: projectName,
  label: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  status: projectStatus.optional(),
  probes: z.array(seedProbe).default([]),
}).superRefine((p, ctx) => {
  const seen = new Set<string>();
  p.probes.forEach((probe, i) => {
    if (seen.has(probe.url)) {
      ctx.addIssue({
        code: "custom",
        path: ["probes", i, "url"],
        message: "a project has one probe per URL; this URL is listed twice",
      });
    }
    seen.add(probe.url);
  });
});

export const seedFile = z.strictObject({
  projects: z.array(seedProject).default([]),
  settings: z.strictObject({ iam_alive: iamAlivePatchInput.optional() }).optional(),
}).superRefine((file, ctx) => {
  const seen = new Set<string>();
  file.projects.forEach((p, i) => {
    if (seen.has(p.project)) {
      ctx.addIssue({ code: "custom", path: ["projects", i, "project"], message: "listed twice" });
    }
    seen.add(p.project);
  });
});
export type SeedFile = z.infer<typeof seedFile>;
type SeedProject = SeedFile["projects"][number];
type SeedProbe = SeedProject["probes"][number];

/** A file that cannot be loaded, with what is wrong where. */
export class SeedFileError extends Error {
  override name = "SeedFileError";
}

/** Parses a seed file's text: JSON for `.json`, YAML (a superset of JSON) otherwise. */
export function parseSeedFile(text: string, fileName: string): SeedFile {
  let raw: unknown;
  try {
    raw = fileName.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new SeedFileError(`${fileName} cannot be parsed: ${(error as Error).message}`);
  }
  const parsed = seedFile.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) =>
      `  ${i.path.join(".") || "(file)"}: ${i.message}`
    );
    throw new SeedFileError(`${fileName} is not a valid seed file:\n${problems.join("\n")}`);
  }
  return parsed.data;
}

export type Action =
  | "created"
  | "updated"
  | "unchanged"
  | "rewritten"
  | "deleted";

export interface Step {
  kind: "project" | "probe" | "settings";
  project?: string;
  /** The probe's URL, for probe steps. */
  target?: string;
  action: Action;
}

export interface SeedOptions {
  /** Delete the probes of the file's projects that the file does not list. */
  prune?: boolean;
  /** Work out the steps without changing anything. */
  dryRun?: boolean;
}

async function existingProject(client: ProbeClient, project: string): Promise<Project | null> {
  try {
    return (await client.projects.get({ project })).data;
  } catch (error) {
    if (error instanceof ProbeApiError && error.status === 404) return null;
    throw error;
  }
}

/** The probe as the service would store it from this definition (its defaults filled in). */
function stored(probe: SeedProbe) {
  return {
    method: probe.method ?? "GET",
    headers: probe.headers ?? {},
    body: probe.body ?? null,
    latency: probe.latency ?? null,
  };
}

const sameProbe = (want: SeedProbe, have: Probe) =>
  isDeepStrictEqual(stored(want), {
    method: have.method,
    headers: have.headers,
    body: have.body ?? null,
    latency: have.latency,
  });

async function seedOneProject(
  client: ProbeClient,
  want: SeedProject,
  { prune = false, dryRun = false }: SeedOptions,
): Promise<Step[]> {
  const steps: Step[] = [];
  const project = want.project;
  const have = await existingProject(client, project);
  const fields = {
    ...(want.label !== undefined && { label: want.label }),
    ...(want.description !== undefined && { description: want.description }),
  };
  if (!have) {
    if (!dryRun) {
      await client.projects.create({ project, ...fields });
      if (want.status === "disabled") await client.projects.update({ project, status: "disabled" });
    }
    steps.push({ kind: "project", project, action: "created" });
  } else {
    const changes = { ...fields, ...(want.status !== undefined && { status: want.status }) };
    const differs = Object.entries(changes).some(([k, v]) => have[k as keyof Project] !== v);
    if (differs && !dryRun) await client.projects.update({ project, ...changes });
    steps.push({ kind: "project", project, action: differs ? "updated" : "unchanged" });
  }

  const current = have ? (await client.probes.listByProject({ project })).data : [];
  const byUrl = new Map(current.map((p) => [p.url, p]));
  for (const probe of want.probes) {
    const existing = byUrl.get(probe.url);
    let action: Action = "unchanged";
    if (!existing || !sameProbe(probe, existing)) {
      action = existing ? "rewritten" : "created";
      if (!dryRun) await client.probes.create({ project, ...probe });
    }
    steps.push({ kind: "probe", project, target: probe.url, action });
  }
  if (prune) {
    const listed = new Set(want.probes.map((p) => p.url));
    for (const probe of current.filter((p) => !listed.has(p.url))) {
      if (!dryRun) await client.probes.delete({ project, probeId: probe.probe_id });
      steps.push({ kind: "probe", project, target: probe.url, action: "deleted" });
    }
  }
  return steps;
}

/** Brings the service in line with the file; answers what was (or, dry, would be) done. */
export async function applySeed(
  client: ProbeClient,
  file: SeedFile,
  options: SeedOptions = {},
): Promise<Step[]> {
  const steps: Step[] = [];
  for (const project of file.projects) {
    steps.push(...await seedOneProject(client, project, options));
  }
  const iamAlive = file.settings?.iam_alive;
  if (iamAlive && Object.keys(iamAlive).length > 0) {
    const have = (await client.settings.getIamAlive()).data;
    // The service turns reporting on when interval or channels come without `enabled`.
    const want = {
      ...have,
      ...iamAlive,
      enabled: iamAlive.enabled ?? true,
    };
    const differs = !isDeepStrictEqual(want, have);
    if (differs && !options.dryRun) await client.settings.updateIamAlive(iamAlive);
    steps.push({
      kind: "settings",
      target: "iam_alive",
      action: differs ? "updated" : "unchanged",
    });
  }
  return steps;
}
