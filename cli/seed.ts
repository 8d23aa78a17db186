/**
 * A monitoring setup kept in version control: remote locations, projects, their probes,
 * maintenance windows and status page settings, alert policies, notification targets and the
 * I'm alive settings in a
 * JSON or YAML file, loaded idempotently. Loading twice changes nothing the second time. Secrets
 * are never in the file: a target names the environment variable that holds its secret
 * (`url_env`, `secret_env`), and a probe the variables that hold secret headers (`headers_env`).
 * A location's token is never in the file either: a location the import creates gets a new
 * token from the service, printed once.
 */
import { isDeepStrictEqual } from "node:util";
import type { Location, NotificationTarget, Probe, ProbeClient, Project } from "@probe/client";
import { ProbeApiError } from "@probe/client";
import {
  alertPolicyPatchInput,
  CERTIFICATE_ON_HTTP_MESSAGE,
  certificateOnHttp,
  dependsOnField,
  findRepeatedKey,
  hasUrlCredentials,
  httpUrl,
  iamAlivePatchInput,
  kindProblems,
  locationCreateInput,
  locationList,
  maintenanceCreateInput,
  MASKED_WEBHOOK_SECRET,
  probeExpect,
  probeHeaders,
  probeIntervalSeconds,
  probeLabel,
  probeLatency,
  probeMethod,
  probeTimeoutMs,
  probeUrl,
  projectAlertsPatchInput,
  projectName,
  projectStatus,
  STATUS_PAGE_DEFAULTS,
  statusPagePatchInput,
  TARGET_KIND_SETTINGS,
  TARGET_KINDS,
  targetName,
  targetRecipients,
  type TargetSettingRule,
  WEBHOOK_URL_CREDENTIALS_MESSAGE,
  webhookSecret,
} from "@probe/shared";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ENV_NAME } from "./secrets.ts";
import { heartbeatsListedTwice, seedHeartbeat, seedHeartbeats } from "./seed_heartbeats.ts";
import { type Dependent, seedDependencies } from "./seed_dependencies.ts";

const envName = z.string().regex(
  ENV_NAME,
  "must be the name of an environment variable (letters, digits and _, not a digit first)",
);

const seedProbe = z.strictObject({
  url: probeUrl,
  method: probeMethod.optional(),
  headers: probeHeaders.optional(),
  /** Headers whose values are secrets: header name to the environment variable holding it. */
  headers_env: z.record(z.string(), envName).optional(),
  body: z.unknown().optional(),
  latency: probeLatency.nullable().optional(),
  label: probeLabel.nullable().optional(),
  expect: probeExpect.nullable().optional(),
  /** Absent or null: the service-wide `PROBE_INTERVAL_SECONDS` / `PROBE_TIMEOUT_MS`. */
  interval_seconds: probeIntervalSeconds.nullable().optional(),
  timeout_ms: probeTimeoutMs.nullable().optional(),
  /** Where it runs; absent or null: its project's `default_locations`. */
  locations: locationList.nullable().optional(),
  /**
   * The probe ids (of probes or heartbeats of its project) it depends on; absent: none. Any
   * entry of the project may be named, before or after this one (`seed_dependencies.ts`).
   */
  depends_on: dependsOnField,
}).superRefine((probe, ctx) => {
  if (certificateOnHttp(probe.url, probe.expect)) {
    ctx.addIssue({
      code: "custom",
      path: ["expect", "certificate_days"],
      message: CERTIFICATE_ON_HTTP_MESSAGE,
    });
  }
  // What the URL's kind has no use for (a tcp:// probe's method), as the service would refuse it.
  for (const problem of kindProblems({ ...probe, headers: probe.headers ?? probe.headers_env })) {
    ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
  }
  const fromEnv = Object.keys(probe.headers_env ?? {});
  if (fromEnv.length === 0) return;
  // The names are checked by the shared rules, with a stand-in value (the real one is read later).
  const merged = { ...probe.headers, ...Object.fromEntries(fromEnv.map((name) => [name, "x"])) };
  const given = new Set(Object.keys(probe.headers ?? {}).map((name) => name.toLowerCase()));
  for (const name of fromEnv) {
    if (given.has(name.toLowerCase())) {
      ctx.addIssue({
        code: "custom",
        path: ["headers_env", name],
        message: "is in headers too: a header takes a value or a variable, not both",
      });
    }
  }
  const checked = probeHeaders.safeParse(merged);
  for (const issue of checked.success ? [] : checked.error.issues) {
    const [name] = issue.path;
    // A name in both lists has its issue above already.
    if (
      name === undefined || fromEnv.includes(String(name)) && !given.has(String(name).toLowerCase())
    ) {
      ctx.addIssue({
        code: "custom",
        path: name === undefined ? ["headers_env"] : ["headers_env", String(name)],
        message: issue.message,
      });
    }
  }
});

/** A maintenance window as the service takes it (its project is the entry's). */
const seedWindow = z.strictObject({
  starts_at: z.string(),
  ends_at: z.string(),
  reason: z.string().nullable().optional(),
}).superRefine((window, ctx) => {
  const checked = maintenanceCreateInput.safeParse({ project: "-", ...window });
  for (const issue of checked.success ? [] : checked.error.issues) {
    ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  }
});

/** The instant a window starts or ends, as the service answers it (a bad one as it is). */
const instantOf = (value: string) =>
  Number.isNaN(Date.parse(value)) ? value : new Date(value).toISOString();

/** What tells one window from another: its span and its reason. */
const windowKey = (w: { starts_at: string; ends_at: string; reason?: string | null }) =>
  `${instantOf(w.starts_at)}/${instantOf(w.ends_at)}/${w.reason ?? ""}`;

/** Items of a list whose `key` repeats an earlier one's: an issue at each repeat. */
function listedTwice<T>(
  items: T[],
  key: (item: T) => string,
  path: (i: number) => (string | number)[],
  ctx: z.RefinementCtx,
) {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(key(item))) {
      ctx.addIssue({ code: "custom", path: path(i), message: "listed twice" });
    }
    seen.add(key(item));
  });
}

/** A project's alert overrides: any field, a value or null to inherit the global policy. */
const projectOverrides = projectAlertsPatchInput.omit({ project: true });

const seedProject = z.strictObject({
  project: projectName,
  label: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  status: projectStatus.optional(),
  /** Where its probes without their own `locations` run; absent or null: the built-in location. */
  default_locations: locationList.nullable().optional(),
  alerts: projectOverrides.optional(),
  /** The public status page's settings: the fields given are set, the others stay. */
  status_page: statusPagePatchInput.omit({ project: true }).optional(),
  probes: z.array(seedProbe).default([]),
  /** Maintenance windows; with `--prune`, the project's windows not listed are deleted. */
  maintenance: z.array(seedWindow).optional(),
  /** Heartbeats by name and timing (`seed_heartbeats.ts`); with `--prune`, the unlisted go. */
  heartbeats: z.array(seedHeartbeat).optional(),
}).superRefine((p, ctx) => {
  listedTwice(p.maintenance ?? [], windowKey, (i) => ["maintenance", i], ctx);
  heartbeatsListedTwice(p.heartbeats ?? [], (issue) => ctx.addIssue({ code: "custom", ...issue }));
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

/** Every setting of any kind, with the rules of its first kind (a name means one thing). */
const ALL_SETTINGS = new Map<string, TargetSettingRule>();
for (const settings of Object.values(TARGET_KIND_SETTINGS)) {
  for (const [name, rule] of Object.entries(settings as Record<string, TargetSettingRule>)) {
    if (!ALL_SETTINGS.has(name)) ALL_SETTINGS.set(name, rule);
  }
}

/** A setting's value written in the file: a URL, mail addresses, a line of text. */
const settingValue = (name: string, rule: TargetSettingRule) =>
  name === "url" ? httpUrl : rule.list ? targetRecipients : z.string().min(1).max(1000);

/**
 * Each setting `NAME` of any kind, written as its value (`NAME`) or as the environment variable
 * that holds it (`NAME_env`). A secret given as a value is refused by name, never repeated.
 */
const targetSettingKeys = () =>
  Object.fromEntries(
    [...ALL_SETTINGS].flatMap(([name, rule]) => [
      [name, (rule.secret && name !== "url" ? z.unknown() : settingValue(name, rule)).optional()],
      ...(rule.list ? [] : [[`${name}_env`, envName.optional()]]),
    ]),
  ) as Record<string, z.ZodOptional<z.ZodType>>;

/**
 * A notification target, without its secrets: a kind's secret settings (a Slack URL, a
 * PagerDuty routing key, a webhook's signing key) are named by the environment variable holding
 * them, `NAME_env`; any other setting may be too.
 */
const seedTarget = z.strictObject({
  name: targetName,
  kind: z.enum(TARGET_KINDS),
  ...targetSettingKeys(),
}).superRefine((target, ctx) => {
  const issue = (path: string, message: string) =>
    ctx.addIssue({ code: "custom", path: [path], input: "", message });
  const { kind } = target;
  const settings: Record<string, TargetSettingRule> = TARGET_KIND_SETTINGS[kind];
  const given = target as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    const name = key.replace(/_env$/, "");
    if (key === "name" || key === "kind" || given[key] === undefined) continue;
    if (!settings[name] && !(key === "secret" && kind === "webhook")) {
      issue(key, `is not a field of a ${kind} target`);
    }
  }
  for (const [name, rule] of Object.entries(settings)) {
    const value = given[name];
    const env = given[`${name}_env`];
    if (value !== undefined && rule.secret) {
      issue(
        name,
        name === "url"
          ? `a ${kind} URL is a credential and must not be in the file: name the environment ` +
            "variable that holds it in url_env"
          : `must not be in the file: name the environment variable that holds it in ${name}_env`,
      );
    } else if (value !== undefined && env !== undefined) {
      issue(name, `a ${kind} target takes exactly one of ${name} and ${name}_env`);
    } else if (value === undefined && env === undefined && rule.required) {
      if (rule.list) issue(name, `is required for a ${kind} target`);
      else if (rule.secret) issue(`${name}_env`, `is required for a ${kind} target`);
      else issue(name, `a ${kind} target takes exactly one of ${name} and ${name}_env`);
    }
  }
  if (kind === "webhook" && typeof given.url === "string" && hasUrlCredentials(given.url)) {
    issue("url", WEBHOOK_URL_CREDENTIALS_MESSAGE);
  }
});

/** A remote location: its name and label, never its token (the built-in one is not listed). */
const seedLocation = locationCreateInput;

export const seedFile = z.strictObject({
  /** Free text for people (a JSON file has no comments); ignored. */
  $comment: z.string().optional(),
  /** Remote locations: created when missing (with a new token, printed once), else labelled. */
  locations: z.array(seedLocation).default([]),
  targets: z.array(seedTarget).default([]),
  alerts: alertPolicyPatchInput.optional(),
  projects: z.array(seedProject).default([]),
  settings: z.strictObject({ iam_alive: iamAlivePatchInput.optional() }).optional(),
}).superRefine((file, ctx) => {
  listedTwice(file.projects, (p) => p.project, (i) => ["projects", i, "project"], ctx);
  listedTwice(file.targets, (t) => t.name, (i) => ["targets", i, "name"], ctx);
  listedTwice(file.locations, (l) => l.name, (i) => ["locations", i, "name"], ctx);
});
export type SeedFile = z.infer<typeof seedFile>;
type SeedProject = SeedFile["projects"][number];
type SeedProbe = SeedProject["probes"][number];
type SeedTarget = SeedFile["targets"][number];
type SeedLocation = SeedFile["locations"][number];

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
  // YAML refuses a repeated key itself; JSON.parse would keep the last one, as the API refuses.
  const repeated = fileName.endsWith(".json") ? findRepeatedKey(text) : null;
  if (repeated) {
    throw new SeedFileError(
      `${fileName} is not a valid seed file:\n  ${repeated.path.join(".")}: ` +
        `the key "${repeated.key}" appears more than once in this object`,
    );
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
  kind:
    | "location"
    | "target"
    | "alerts"
    | "project"
    | "probe"
    | "maintenance"
    | "heartbeat"
    | "status_page"
    | "settings";
  project?: string;
  /**
   * What the step is about: the probe's URL, the target's name, `policy` for the global alert
   * policy and `overrides` for a project's, a window's `starts_at/ends_at`, `iam_alive` for the
   * settings, the location's name.
   */
  target?: string;
  action: Action;
  /**
   * The signing key the service generated for a webhook target created without `secret_env`:
   * the one time it is shown.
   */
  secret?: string;
  /** The token of a location the import created: the one time it is shown. */
  token?: string;
  /** Something the step does that the file does not say in so many words. */
  note?: string;
}

export interface SeedOptions {
  /**
   * Delete the probes of the file's projects that the file does not list, and their maintenance
   * windows not listed where the project has a `maintenance` list.
   */
  prune?: boolean;
  /** Work out the steps without changing anything. */
  dryRun?: boolean;
  /**
   * Where secrets are read from (targets' `url_env` and `secret_env`, probes' `headers_env`);
   * none when absent.
   */
  env?: Record<string, string | undefined>;
  /**
   * Also write the secrets of targets that exist already. They cannot be read back, so they are
   * not compared: without this, a changed secret of an existing target is left as it is.
   */
  updateSecrets?: boolean;
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
    label: probe.label ?? null,
    expect: probe.expect ?? null,
    interval_seconds: probe.interval_seconds ?? null,
    timeout_ms: probe.timeout_ms ?? null,
    locations: probe.locations ?? null,
  };
}

const sameProbe = (want: SeedProbe, have: Probe) =>
  isDeepStrictEqual(stored(want), {
    method: have.method,
    headers: have.headers,
    body: have.body ?? null,
    latency: have.latency,
    label: have.label,
    expect: have.expect,
    interval_seconds: have.interval_seconds,
    timeout_ms: have.timeout_ms,
    locations: have.locations,
  });

/** Whether any field the file gives differs from what the service holds. */
const differsFrom = (want: Record<string, unknown>, have: Record<string, unknown>) =>
  Object.entries(want).some(([key, value]) => !isDeepStrictEqual(value, have[key]));

const NO_OVERRIDES = {
  enabled: null,
  targets: null,
  failure_threshold: null,
  success_threshold: null,
  reminder_minutes: null,
  notify_degraded: null,
  notify_recovered: null,
};

/** A target as it will be sent: its secrets read from the environment. */
interface ResolvedTarget {
  name: string;
  kind: SeedTarget["kind"];
  [setting: string]: string | string[];
}

/** Reads one variable for the field at `where`, adding a problem (never the value) on failure. */
function envReader(env: Record<string, string | undefined>, problems: string[]) {
  return <T>(where: string, name: string, schema: z.ZodType<T>): T | undefined => {
    const value = env[name]?.trim();
    if (!value) {
      problems.push(`  ${where}: the environment variable ${name} is not set`);
      return undefined;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const messages = parsed.error.issues.map((issue) => issue.message).join("; ");
      problems.push(`  ${where}: the value of ${name} ${messages}`);
      return undefined;
    }
    return parsed.data;
  };
}

/** What the value of a variable naming a setting must be. */
const variableValue = (kind: string, name: string) =>
  name === "url" ? httpUrl : kind === "webhook" && name === "secret" ? webhookSecret : z.string();

function resolveTarget(t: SeedTarget, i: number, read: ReturnType<typeof envReader>) {
  const where = (field: string) => `targets.${i}.${field}`;
  const given = t as Record<string, unknown>;
  const target: ResolvedTarget = { name: t.name, kind: t.kind };
  let problem: string | undefined;
  for (const name of Object.keys(TARGET_KIND_SETTINGS[t.kind])) {
    const variable = given[`${name}_env`];
    const value = typeof variable === "string"
      ? read(where(`${name}_env`), variable, variableValue(t.kind, name))
      : given[name] as string | string[] | undefined;
    if (value === undefined) continue;
    target[name] = value;
    if (
      t.kind === "webhook" && name === "url" && typeof variable === "string" &&
      hasUrlCredentials(value as string)
    ) {
      problem = `  ${
        where("url_env")
      }: the value of ${variable} ${WEBHOOK_URL_CREDENTIALS_MESSAGE}`;
    }
  }
  return { problem, target };
}

/** A header value as the service takes one; the message never repeats the value. */
const headerValue = z.string().superRefine((value, ctx) => {
  const checked = probeHeaders.safeParse({ "x-value": value });
  for (const issue of checked.success ? [] : checked.error.issues) {
    ctx.addIssue({ code: "custom", input: "", message: issue.message });
  }
});

/** A probe with the headers its variables hold merged into `headers`. */
function resolveProbe(
  probe: SeedProbe,
  where: string,
  read: ReturnType<typeof envReader>,
): SeedProbe {
  const { headers_env: fromEnv, ...rest } = probe;
  if (fromEnv === undefined) return rest;
  const headers = { ...probe.headers };
  for (const [name, variable] of Object.entries(fromEnv)) {
    const value = read(`${where}.headers_env.${name}`, variable, headerValue);
    if (value !== undefined) headers[name] = value;
  }
  return { ...rest, headers };
}

/** The file with its secrets read from the environment: targets to send, probes' headers. */
export interface ResolvedSeed {
  targets: ResolvedTarget[];
  projects: SeedProject[];
}

/**
 * Reads every secret the file names from the environment (targets' URLs and keys, probes'
 * secret headers), before anything is changed. An unset variable, or one whose value the service
 * would refuse, is an error naming the variable (never its value); all of them are reported at
 * once.
 */
export function resolveSecrets(
  file: Pick<SeedFile, "targets" | "projects">,
  env: Record<string, string | undefined> = {},
  fileName = "the seed file",
): ResolvedSeed {
  const problems: string[] = [];
  const read = envReader(env, problems);
  const targets = file.targets.map((t, i) => {
    const { problem, target } = resolveTarget(t, i, read);
    if (problem) problems.push(problem);
    return target;
  });
  const projects = file.projects.map((p, i) => ({
    ...p,
    probes: p.probes.map((probe, j) => resolveProbe(probe, `projects.${i}.probes.${j}`, read)),
  }));
  if (problems.length > 0) {
    throw new SeedFileError(
      `${fileName} names secrets that cannot be read:\n${problems.join("\n")}`,
    );
  }
  return { targets, projects };
}

async function existingTarget(client: ProbeClient, name: string) {
  try {
    return (await client.targets.get({ name })).data;
  } catch (error) {
    if (error instanceof ProbeApiError && error.status === 404) return null;
    throw error;
  }
}

/** A secret URL as a read shows it: its scheme and host (the rest is the credential). */
const cutUrl = (url: string) => {
  const { protocol, host } = new URL(url);
  return `${protocol}//${host}/…`;
};

async function seedOneTarget(
  client: ProbeClient,
  want: ResolvedTarget,
  { dryRun = false, updateSecrets = false }: SeedOptions,
): Promise<Step> {
  const step = { kind: "target", target: want.name } as const;
  const have: NotificationTarget | null = await existingTarget(client, want.name);
  if (!have) {
    if (dryRun) return { ...step, action: "created" };
    const { data } = await client.targets.create(want);
    const generated = want.kind === "webhook" && want.secret === undefined &&
        data.secret !== null && data.secret !== MASKED_WEBHOOK_SECRET
      ? { secret: data.secret }
      : {};
    return { ...step, action: "created", ...generated };
  }
  if (have.kind !== want.kind) {
    throw new SeedFileError(
      `Target ${want.name} is a ${have.kind} target on the service, the file says ${want.kind}: ` +
        "a target's kind cannot change (delete it first, then import again)",
    );
  }
  // What a read shows is compared: a setting's value, a secret URL's host; other secrets
  // cannot be read back, so they are written only when asked.
  const settings: Record<string, TargetSettingRule> = TARGET_KIND_SETTINGS[want.kind];
  const read = have as NotificationTarget & Record<string, unknown>;
  const { kind: _kind, name, ...given } = want;
  const visible = Object.entries(given).some(([setting, value]) =>
    !settings[setting].secret
      ? !isDeepStrictEqual(value, read[setting])
      : setting === "url" && cutUrl(value as string) !== read.url
  );
  const secrets = updateSecrets && Object.keys(given).some((s) => settings[s].secret);
  if (!visible && !secrets) return { ...step, action: "unchanged" };
  if (!dryRun) {
    const sent = Object.fromEntries(
      Object.entries(given).filter(([setting]) =>
        updateSecrets || !settings[setting].secret || setting === "url"
      ),
    );
    await client.targets.update({ name, ...sent });
  }
  return { ...step, action: "updated" };
}

/**
 * A remote location: created when missing (the service makes its token, answered in the step
 * this once), its label updated when it differs. Locations are never deleted by an import.
 */
async function seedOneLocation(
  client: ProbeClient,
  want: SeedLocation,
  have: Location | undefined,
  dryRun: boolean,
): Promise<Step> {
  const step = { kind: "location", target: want.name } as const;
  if (!have) {
    if (dryRun) return { ...step, action: "created" };
    const { data } = await client.locations.create(want);
    return { ...step, action: "created", token: data.token };
  }
  if (have.kind !== "remote") {
    throw new SeedFileError(
      `Location ${want.name} is the service's built-in location: list remote locations only`,
    );
  }
  if (want.label === undefined || want.label === have.label) {
    return { ...step, action: "unchanged" };
  }
  if (!dryRun) await client.locations.update({ location: want.name, label: want.label });
  return { ...step, action: "updated" };
}

async function seedProjectAlerts(
  client: ProbeClient,
  project: string,
  exists: boolean,
  want: NonNullable<SeedProject["alerts"]>,
  dryRun: boolean,
): Promise<Step> {
  const have = exists ? (await client.alerts.getProject({ project })).data.overrides : NO_OVERRIDES;
  const differs = differsFrom(want, have);
  if (differs && !dryRun) await client.alerts.updateProject({ project, ...want });
  return {
    kind: "alerts",
    project,
    target: "overrides",
    action: differs ? "updated" : "unchanged",
  };
}

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
    ...(want.default_locations !== undefined && { default_locations: want.default_locations }),
  };
  if (!have) {
    if (!dryRun) {
      await client.projects.create({ project, ...fields });
      if (want.status === "disabled") await client.projects.update({ project, status: "disabled" });
    }
    steps.push({ kind: "project", project, action: "created" });
  } else {
    const changes = { ...fields, ...(want.status !== undefined && { status: want.status }) };
    const differs = Object.entries(changes).some(([k, v]) =>
      !isDeepStrictEqual(have[k as keyof Project], v)
    );
    if (differs && !dryRun) await client.projects.update({ project, ...changes });
    steps.push({ kind: "project", project, action: differs ? "updated" : "unchanged" });
  }
  if (want.alerts && Object.keys(want.alerts).length > 0) {
    steps.push(await seedProjectAlerts(client, project, have !== null, want.alerts, dryRun));
  }

  const current = have ? (await client.probes.listByProject({ project })).data : [];
  const byUrl = new Map(current.map((p) => [p.url, p]));
  // Dependencies come last, when every probe and heartbeat they may name is there.
  const dependents: Dependent[] = [];
  for (const { depends_on, ...probe } of want.probes) {
    const existing = byUrl.get(probe.url);
    let action: Action = "unchanged";
    let probeId = existing?.probe_id;
    if (!existing || !sameProbe(probe, existing)) {
      action = existing ? "rewritten" : "created";
      // A create (or rewrite) without depends_on leaves the probe depending on nothing.
      if (!dryRun) probeId = (await client.probes.create({ project, ...probe })).data.probe_id;
    }
    dependents.push({
      target: probe.url,
      probeId,
      want: depends_on,
      have: action === "unchanged" ? existing?.depends_on : undefined,
    });
    steps.push({ kind: "probe", project, target: probe.url, action });
  }
  if (prune) {
    const listed = new Set(want.probes.map((p) => p.url));
    for (const probe of current.filter((p) => !listed.has(p.url))) {
      if (!dryRun) await client.probes.delete({ project, probeId: probe.probe_id });
      steps.push({ kind: "probe", project, target: probe.url, action: "deleted" });
    }
  }
  if (want.maintenance) {
    steps.push(
      ...await seedMaintenance(client, project, have !== null, want.maintenance, {
        prune,
        dryRun,
      }),
    );
  }
  // Before the status page, which may name a heartbeat by its probe id.
  if (want.heartbeats) {
    const seeded = await seedHeartbeats(client, project, have !== null, want.heartbeats, {
      prune,
      dryRun,
    });
    steps.push(...seeded.steps);
    dependents.push(...seeded.dependents);
  }
  const changed = await seedDependencies(client, project, dependents, dryRun);
  for (const step of steps) {
    // Only its dependencies differ: the probe or heartbeat is updated, not rewritten.
    const dependent = step.kind === "probe" || step.kind === "heartbeat";
    if (dependent && step.action === "unchanged" && changed.has(step.target!)) {
      step.action = "updated";
    }
  }
  if (want.status_page && Object.keys(want.status_page).length > 0) {
    const current = have ? (await client.statusPages.get({ project })).data : STATUS_PAGE_DEFAULTS;
    const differs = differsFrom(want.status_page, current);
    if (differs && !dryRun) await client.statusPages.update({ project, ...want.status_page });
    steps.push({ kind: "status_page", project, action: differs ? "updated" : "unchanged" });
  }
  return steps;
}

/**
 * A project's maintenance windows: those the file lists and the service lacks are created (a
 * window is its span and reason: windows cannot be edited); with `prune`, the service's windows
 * the file does not list are deleted.
 */
async function seedMaintenance(
  client: ProbeClient,
  project: string,
  exists: boolean,
  want: NonNullable<SeedProject["maintenance"]>,
  { prune = false, dryRun = false }: SeedOptions,
): Promise<Step[]> {
  const steps: Step[] = [];
  const current = exists ? (await client.maintenance.list({ project, state: "all" })).data : [];
  const have = new Set(current.map(windowKey));
  const span = (w: { starts_at: string; ends_at: string }) =>
    `${instantOf(w.starts_at)}/${instantOf(w.ends_at)}`;
  for (const window of want) {
    const action: Action = have.has(windowKey(window)) ? "unchanged" : "created";
    if (action === "created" && !dryRun) await client.maintenance.create({ project, ...window });
    steps.push({ kind: "maintenance", project, target: span(window), action });
  }
  if (prune) {
    const listed = new Set(want.map(windowKey));
    for (const window of current.filter((w) => !listed.has(windowKey(w)))) {
      if (!dryRun) await client.maintenance.delete({ project, id: window.id });
      steps.push({ kind: "maintenance", project, target: span(window), action: "deleted" });
    }
  }
  return steps;
}

/**
 * Brings the service in line with the file; answers what was (or, dry, would be) done. Locations
 * come first (probes name them), then targets (the policies name them), then the global alert policy, the projects with their
 * overrides, probes, maintenance windows and status page, and the I'm alive settings. Throws a
 * SeedFileError before changing anything when a secret cannot be read from `options.env`.
 */
export async function applySeed(
  client: ProbeClient,
  file: SeedFile,
  options: SeedOptions = {},
): Promise<Step[]> {
  const { targets, projects } = resolveSecrets(file, options.env);
  const steps: Step[] = [];
  // Locations first: probes and projects name them.
  if (file.locations.length > 0) {
    const have = new Map((await client.locations.list()).data.map((l) => [l.name, l]));
    for (const location of file.locations) {
      steps.push(
        await seedOneLocation(client, location, have.get(location.name), Boolean(options.dryRun)),
      );
    }
  }
  for (const target of targets) steps.push(await seedOneTarget(client, target, options));
  if (file.alerts && Object.keys(file.alerts).length > 0) {
    const have = (await client.alerts.get()).data;
    const differs = differsFrom(file.alerts, have);
    if (differs && !options.dryRun) await client.alerts.update(file.alerts);
    steps.push({ kind: "alerts", target: "policy", action: differs ? "updated" : "unchanged" });
  }
  for (const project of projects) {
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
    // The interface's rule: interval or channels without `enabled` turn reporting on. Said, so
    // that a seed meant only to tune the schedule does not start reports unnoticed.
    const turnsOn = iamAlive.enabled === undefined && !have.enabled;
    steps.push({
      kind: "settings",
      target: "iam_alive",
      action: differs ? "updated" : "unchanged",
      ...(turnsOn && {
        note: "I'm alive reporting is turned on: the file sets interval_hours or channels " +
          "without enabled, and the service then enables reporting (add enabled: false to keep " +
          "it off)",
      }),
    });
  }
  return steps;
}
