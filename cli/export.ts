/**
 * The service's configuration as a seed file (cli/seed.ts): what `deno task seed --prune` loads
 * back into this instance or a fresh one. Results, incidents, badge tokens, location tokens,
 * heartbeats' ping tokens and pings, and deliveries are not configuration and stay out (a remote location is exported by name and
 * label: loaded elsewhere, it gets a new token). Secrets stay out too: a target's secret and a probe's secret
 * header are replaced by the name of an environment variable that is to hold it (`url_env`,
 * `secret_env`, `headers_env`). The text depends only on the configuration: everything is in a
 * fixed order, and there is no time or address in it, so two instances configured alike export
 * the same text.
 */
import type { NotificationTarget, Probe, ProbeClient } from "@probe/client";
import {
  ALERT_POLICY_FIELDS,
  kindOf,
  MASKED,
  REDACTED,
  type TargetSettingRule,
  targetSettingsOf,
} from "@probe/shared";
import { stringify } from "yaml";
import { exportHeartbeat } from "./seed_heartbeats.ts";
import { exportDependsOn } from "./seed_dependencies.ts";

/** An environment variable the export names, and what it is to hold. */
export interface ExportVariable {
  name: string;
  /** For people: what the value is and where it can be found. */
  holds: string;
}

export interface ExportOptions {
  /**
   * Write the values of secret-looking probe headers (`SECRET_HEADER`) into the file instead of
   * naming variables. The service shows them to write keys only: with a read-only key they are
   * masked and named as variables all the same.
   */
  headerValues?: boolean;
}

/** Whether a target URL is shown cut to its scheme and host (`https://host/…`). */
const isCutUrl = (url: string) => url.endsWith("/…");

export interface Exported {
  /** The seed file's content, keys in the order they are written. */
  seed: Record<string, unknown>;
  variables: ExportVariable[];
  counts: {
    projects: number;
    probes: number;
    targets: number;
    windows: number;
    locations: number;
    heartbeats: number;
  };
  /**
   * Probe URLs whose password or query tokens the service masked (`****`) because the key may
   * only read: written as shown, they cannot be loaded as they are.
   */
  maskedUrls: string[];
}

/**
 * Header names whose values are taken for secrets: credentials, cookies, tokens, keys,
 * signatures. Matched anywhere in the name, ignoring case (`X-Auth-Token`, `X-Api-Key`).
 */
export const SECRET_HEADER =
  /auth|cookie|token|secret|passw|api[-_]?key|session|signature|credential/i;

/** Orders by code units, the same on every machine (no locale). */
const byText = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0;

/** `team-slack` → `TEAM_SLACK`: what an environment variable's name may hold. */
const upperSnake = (text: string) =>
  text.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_+|_+$/g, "");

/** Hands out variable names, one per secret; a name taken already gets `_2`, `_3`, … */
function variableNames() {
  const taken = new Set<string>();
  const variables: ExportVariable[] = [];
  return {
    variables,
    name(base: string, holds: string): string {
      let name = base;
      for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
      taken.add(name);
      variables.push({ name, holds });
      return name;
    },
  };
}

type Names = ReturnType<typeof variableNames>;

/**
 * A target as a seed file holds it: each setting the read shows, in its kind's order; a secret
 * (and a URL the key may only see cut) as the variable that is to hold it, `NAME_env`.
 */
function exportTarget(target: NotificationTarget, names: Names): Record<string, unknown> {
  const stem = `PROBE_TARGET_${upperSnake(target.name)}`;
  const { name, kind } = target;
  const read = target as NotificationTarget & Record<string, unknown>;
  const notShown = "not readable from the service: take it from where you keep it";
  const exported: Record<string, unknown> = { name, kind };
  const settings: Record<string, TargetSettingRule> = targetSettingsOf(kind) ?? {};
  for (const [setting, rule] of Object.entries(settings)) {
    const value = read[setting];
    if (value === null || value === undefined) {
      // A mail target's recipients are always there; anything else absent was not set.
      if (rule.list) exported[setting] = [];
      continue;
    }
    if (rule.secret) {
      const what = kind === "webhook" && setting === "secret"
        ? "the signing key (whsec_…)"
        : setting === "url"
        ? "the URL"
        : `the ${setting}`;
      exported[`${setting}_env`] = names.name(
        `${stem}_${upperSnake(setting)}`,
        `${what} of ${kind} target ${name}; ${notShown}`,
      );
    } else if (setting === "url" && isCutUrl(String(value))) {
      // Cut for a read-only key: the URL goes to a variable, as a Slack URL does.
      exported.url_env = names.name(
        `${stem}_URL`,
        `the URL of ${kind} target ${name}; read it with a write key`,
      );
    } else exported[setting] = value;
  }
  return exported;
}

function exportProbe(
  probe: Probe,
  names: Names,
  { headerValues = false }: ExportOptions,
): Record<string, unknown> {
  const headers: Record<string, string> = {};
  const headersEnv: Record<string, string> = {};
  for (const header of Object.keys(probe.headers).sort(byText)) {
    const masked = probe.headers[header] === REDACTED;
    if (!masked && (headerValues || !SECRET_HEADER.test(header))) {
      headers[header] = probe.headers[header];
      continue;
    }
    const { project, probe_id: id } = probe;
    headersEnv[header] = names.name(
      `PROBE_HEADER_${upperSnake(project)}_${id.toUpperCase()}_${upperSnake(header)}`,
      `the ${header} header of probe ${id} of project ${project}; ` +
        `read it with: deno task cli --json probes get ${project} ${id}`,
    );
  }
  return {
    url: probe.url,
    // A kind without a method (tcp://, tls://, dns://) is stored with GET, which it may not send.
    ...(kindOf(probe.url)?.uses.method !== false && { method: probe.method }),
    ...(probe.label !== null && { label: probe.label }),
    ...(Object.keys(headers).length > 0 && { headers }),
    ...(Object.keys(headersEnv).length > 0 && { headers_env: headersEnv }),
    ...(probe.body !== null && probe.body !== undefined && { body: probe.body }),
    ...(probe.latency !== null && { latency: probe.latency }),
    // Absent: the probe runs at the service-wide setting, wherever it is loaded.
    ...(probe.interval_seconds !== null && { interval_seconds: probe.interval_seconds }),
    ...(probe.timeout_ms !== null && { timeout_ms: probe.timeout_ms }),
    ...(probe.expect !== null && { expect: probe.expect }),
    // Absent: it runs where its project's default_locations say.
    ...(probe.locations !== null && { locations: probe.locations }),
    ...exportDependsOn(probe.depends_on),
  };
}

/** A project's entry: its fields, overrides, status page when not the default, probes, windows. */
async function exportProject(
  client: ProbeClient,
  project: {
    project: string;
    label: string | null;
    description: string | null;
    status: string;
    default_locations: string[] | null;
  },
  probes: Probe[],
  names: Names,
  options: ExportOptions,
) {
  const name = project.project;
  const [alerts, page, windows, heartbeats] = await Promise.all([
    client.alerts.getProject({ project: name }),
    client.statusPages.get({ project: name }),
    client.maintenance.list({ project: name, state: "all" }),
    client.heartbeats.list({ project: name }),
  ]);
  const overrides = Object.fromEntries(
    ALERT_POLICY_FIELDS.map((f) => [f, alerts.data.overrides[f]] as const)
      .filter(([, value]) => value !== null),
  );
  const { public: isPublic, title, description, show_urls, show_locations, probe_ids } = page.data;
  const pageChanged = isPublic || show_urls || show_locations || title !== null ||
    description !== null || probe_ids !== null;
  const maintenance = windows.data
    .map((w) => ({
      starts_at: w.starts_at,
      ends_at: w.ends_at,
      ...(w.reason !== null && { reason: w.reason }),
    }))
    .sort((a, b) =>
      byText(a.starts_at, b.starts_at) || byText(a.ends_at, b.ends_at) ||
      byText(a.reason ?? "", b.reason ?? "")
    );
  return {
    entry: {
      project: name,
      ...(project.label !== null && { label: project.label }),
      ...(project.description !== null && { description: project.description }),
      status: project.status,
      ...(project.default_locations !== null &&
        { default_locations: project.default_locations }),
      ...(Object.keys(overrides).length > 0 && { alerts: overrides }),
      ...(pageChanged && {
        status_page: {
          public: isPublic,
          title,
          description,
          show_urls,
          ...(show_locations && { show_locations }),
          ...(probe_ids !== null && { probe_ids }),
        },
      }),
      probes: probes.sort((a, b) => byText(a.url, b.url)).map((p) =>
        exportProbe(p, names, options)
      ),
      ...(maintenance.length > 0 && { maintenance }),
      // Settings only, by name: a ping URL's token is a secret, and a seeded one gets a new URL.
      ...(heartbeats.data.length > 0 && { heartbeats: heartbeats.data.map(exportHeartbeat) }),
    },
    windows: maintenance.length,
    heartbeats: heartbeats.data.length,
  };
}

/**
 * Reads the service's configuration and writes it as a seed file's content, with the variables
 * it names for secrets. Only reads: nothing on the service changes.
 */
export async function exportSeed(
  client: ProbeClient,
  options: ExportOptions = {},
): Promise<Exported> {
  const [locations, targets, policy, iamAlive, projects, probes] = await Promise.all([
    client.locations.list(),
    client.targets.list(),
    client.alerts.get(),
    client.settings.getIamAlive(),
    client.projects.list(),
    client.probes.list(),
  ]);
  const names = variableNames();
  const remote = locations.data.filter((l) => l.kind === "remote")
    .sort((a, b) => byText(a.name, b.name))
    .map((l) => ({ name: l.name, ...(l.label !== null && { label: l.label }) }));
  const stored = targets.data.filter((t) => t.kind !== "log").sort((a, b) =>
    byText(a.name, b.name)
  );
  // Targets first, as in the file: a name two secrets would share goes to the first one.
  const exportedTargets = stored.map((t) => exportTarget(t, names));
  const probesOf = Map.groupBy(probes.data, (p) => p.project);
  const entries = [];
  let windows = 0;
  let heartbeats = 0;
  for (const project of projects.data.sort((a, b) => byText(a.project, b.project))) {
    const exported = await exportProject(
      client,
      project,
      probesOf.get(project.project) ?? [],
      names,
      options,
    );
    entries.push(exported.entry);
    windows += exported.windows;
    heartbeats += exported.heartbeats;
  }
  const { enabled, interval_hours, channels } = iamAlive.data;
  return {
    seed: {
      // Remote ones only, by name (bytewise): the built-in location is every instance's own.
      ...(remote.length > 0 && { locations: remote }),
      targets: exportedTargets,
      alerts: Object.fromEntries(ALERT_POLICY_FIELDS.map((f) => [f, policy.data[f]])),
      projects: entries,
      settings: {
        // `enabled` always: without it, the import would turn reporting on.
        iam_alive: { enabled, interval_hours, ...(channels.length > 0 && { channels }) },
      },
    },
    variables: names.variables,
    maskedUrls: probes.data.map((p) => p.url).filter((url) => url.includes(MASKED)),
    counts: {
      projects: entries.length,
      probes: probes.data.length,
      targets: stored.length,
      windows,
      locations: remote.length,
      heartbeats,
    },
  };
}

/** How to load an export, for its header. */
function howToLoad(variables: ExportVariable[]): string[] {
  return [
    "The probe service's configuration, written by `deno task cli export`.",
    "Load it into this instance or another one with:",
    "  deno task seed --prune <this file>",
    "(--prune deletes the probes, maintenance windows and heartbeats of the projects listed here",
    "that this file does not list; nothing else is deleted.)",
    "A heartbeat it creates gets a new ping URL: point its job at that URL.",
    "A remote location it creates is given new credentials for its runners, printed once.",
    ...(variables.length === 0 ? ["It names no secrets: no environment variable is needed."] : [
      "Secrets are not in this file: set these environment variables first (see docs/cli.md):",
      ...variables.map((v) => `  ${v.name}`),
    ]),
  ];
}

/**
 * The export as text: YAML with a comment saying how to load it, or JSON with the same words in
 * `$comment` (which the seed format takes and ignores).
 */
export function renderSeed(exported: Exported, format: "yaml" | "json"): string {
  const header = howToLoad(exported.variables);
  if (format === "json") {
    return `${JSON.stringify({ $comment: header.join(" "), ...exported.seed }, null, 2)}\n`;
  }
  // No folding: a long URL or header stays on one line, as diffs read best.
  const body = stringify(exported.seed, { lineWidth: 0 });
  return `${header.map((line) => `# ${line}`).join("\n")}\n${body}`;
}
