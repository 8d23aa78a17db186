import { z } from "zod";
import { textProblem } from "./json.ts";
import { pageQuery } from "./envelope.ts";

/** Project names: 1 to 64 characters, a letter or digit first, then letters, digits, `.`, `_`, `-`. */
export const PROJECT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const projectName = z.string().min(1).max(64).regex(
  PROJECT_NAME_PATTERN,
  "must start with a letter or digit and hold only letters, digits, '.', '_' and '-'",
);

/**
 * A name in a path (`{project}`, a target's `{name}`): the OpenAPI document carries the name rules,
 * and a name that breaks them names nothing, so it is answered 404 as the interface lists for these
 * operations, not 422 (a name in a body is checked: {@link projectName}).
 */
export const nameInPath = z.string().meta({
  pattern: PROJECT_NAME_PATTERN.source,
  minLength: 1,
  maxLength: 64,
});

export const projectStatus = z.enum(["enabled", "disabled"]);
export type ProjectStatus = z.infer<typeof projectStatus>;

/** Free text stored as PostgreSQL text: any string without NUL or an unpaired surrogate. */
export const text = (max: number) =>
  z.string().max(max).superRefine((s, ctx) => {
    const problem = textProblem(s);
    if (problem) ctx.addIssue({ code: "custom", input: s, message: problem });
  });

const label = text(200).nullable().optional();
const description = text(4000).nullable().optional();

/** The most locations one probe (or a project's default) names. */
export const MAX_PROBE_LOCATIONS = 16;

/** Location names follow the rules of project names. */
export const locationName = z.string().min(1).max(64).regex(
  PROJECT_NAME_PATTERN,
  "must start with a letter or digit and hold only letters, digits, '.', '_' and '-'",
);

/**
 * Where a probe runs (or a project's probes run by default): 1 to 16 location names, each once.
 * Unknown names are refused (422) by the service.
 */
export const locationList = z.array(locationName).min(1).max(MAX_PROBE_LOCATIONS)
  .superRefine((names, ctx) => {
    const seen = new Set<string>();
    names.forEach((name, i) => {
      if (seen.has(name)) ctx.addIssue({ code: "custom", path: [i], message: "named twice" });
      seen.add(name);
    });
  });

/** The `?location=` filter of results, stats and series: one location's runs only. */
export const locationFilter = locationName.optional().describe(
  "Only the runs made from this location; absent: every location's.",
);

/** Where the project's probes without their own `locations` run; null: the built-in location. */
const defaultLocations = locationList.nullable().optional().describe(
  "Where the project's probes without their own locations run (1 to 16 location names); " +
    "null or absent: the built-in location (RUNNER_LOCATION, `local`). Unknown names are refused.",
);

export const projectCreateInput = z.strictObject({
  project: projectName,
  label,
  description,
  default_locations: defaultLocations,
});
export type ProjectCreateInput = z.infer<typeof projectCreateInput>;

export const projectPatchBody = {
  label,
  description,
  status: projectStatus.nullable().optional(),
  default_locations: defaultLocations,
};

export const projectPatchInput = z.strictObject({ project: nameInPath, ...projectPatchBody });
export type ProjectPatchInput = z.infer<typeof projectPatchInput>;

export const projectRef = z.object({ project: nameInPath });

export const projectListInput = z.object({ project: z.string().optional(), ...pageQuery });

export const project = z.object({
  project: z.string(),
  label: z.string().nullable(),
  description: z.string().nullable(),
  status: projectStatus,
  /** Where its probes without their own locations run; null: the built-in location alone. */
  default_locations: z.array(z.string()).nullable(),
});
export type Project = z.infer<typeof project>;

export const projectDeleted = z.object({
  project: z.string(),
  deleted: z.boolean(),
  archived: z.boolean(),
});
export type ProjectDeleted = z.infer<typeof projectDeleted>;
