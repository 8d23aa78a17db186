/**
 * An incident as messages tell of it: its row, the name of its probe, its event, and the claim of
 * open incidents whose time to be told again has come (reminders, escalation steps). Apart from
 * `incidents.ts` so that what it calls (escalation, dependencies) reads incidents without
 * importing back.
 *
 * @module
 */
import {
  type AlertEvent,
  type AlertEventType,
  type AlertPolicyField,
  type FailedCheck,
  kindOf as probeKindOf,
  type LocationStates,
  maskUrl,
} from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { effectivePolicy } from "./policy_sql.ts";
import type { ProbeState } from "../storage/schema.ts";
import type { StateChange } from "./states.ts";
import { failureWords } from "../ui/failure_words.js";
import { kindOf } from "../ui/kinds.js";

export type Resolution = "recovered" | "changed" | "deleted" | "disabled";

/**
 * A probe as messages and lists name it: its label, or its URL without credentials, query values
 * and fragment. A query part without `=` may be a bare token, so only parts with one are named.
 * A URL of a kind whose form has no room for a credential (`tcp:`, `tls:`, `dns:`: `urlHoldsSecrets`
 * in `shared/kinds/`, as `maskUrl` reads it) is shown whole: a dns URL's one query value is its
 * record type.
 */
export function displayLabel(label: string | null, url: string): string {
  if (label) return label;
  if (probeKindOf(url)?.urlHoldsSecrets === false) return url;
  if (!URL.canParse(url)) return url;
  const u = new URL(url);
  u.username = "";
  u.password = "";
  const named = u.search.slice(1).split("&").filter((part) => part.includes("="));
  const names = [...new URLSearchParams(named.join("&")).keys()];
  u.search = "";
  u.hash = "";
  return names.length ? `${u.href}?${names.map((n) => encodeURIComponent(n)).join("&")}` : u.href;
}

export interface IncidentRow {
  id: number | string;
  project: string;
  probe_key: number | string;
  probe_id: string;
  label: string;
  started_at: Date | string;
  cause: string;
  runs_failed: number;
  last_error: string | null;
  resolved_at: Date | string | null;
  resolution: Resolution | null;
  locations: LocationStates | null;
  /** The dependency whose being down keeps it untold (`dependencies.ts`); null: told. */
  suppressed_by?: number | string | null;
}

const isoOf = (value: Date | string | null) =>
  value === null ? null : new Date(value).toISOString();

/**
 * Why a run failed, in words (`answered HTTP 500, expected 200`: `server/ui/failure_words.js`,
 * as the dashboard says it); null for a run that did not fail.
 */
export const causeOf = (
  run: Pick<StateChange, "error" | "failedChecks"> & { url?: string },
): string | null =>
  failureWords({ error: run.error, failed_checks: run.failedChecks }, kindOf(run.url ?? ""));

/** What the run an event is about recorded, as its result gives it: the codes beside the words. */
interface RunCodes {
  error: string | null;
  httpStatus?: number | null;
  failedChecks?: FailedCheck[] | null;
}

/** The event of an incident (or of a probe without one, for `degraded`). */
export function eventOf(
  type: AlertEventType,
  at: Date,
  data: {
    incident: IncidentRow | null;
    project: string;
    probeId: string;
    label: string;
    url: string | null;
    state: ProbeState;
    cause: string | null;
    run: RunCodes;
    locations?: LocationStates | null;
  },
): AlertEvent {
  const { incident } = data;
  const started = incident ? new Date(incident.started_at) : null;
  const resolved = incident?.resolved_at ? new Date(incident.resolved_at) : null;
  return {
    type,
    timestamp: at.toISOString(),
    data: {
      incident_id: incident ? String(incident.id) : null,
      project: data.project,
      probe_id: data.probeId,
      label: data.label,
      url: data.url === null ? null : maskUrl(data.url),
      // Set where the notifier sends it, from PUBLIC_URL (`server/alerting/notify/targets.ts`).
      link: null,
      state: data.state,
      cause: data.cause,
      error: data.run.error,
      http_status: data.run.httpStatus ?? null,
      failed_checks: data.run.failedChecks ?? null,
      started_at: isoOf(started),
      resolved_at: isoOf(resolved),
      duration_seconds: started && resolved
        ? Math.round((resolved.getTime() - started.getTime()) / 1000)
        : null,
      runs_failed: incident?.runs_failed ?? null,
      locations: data.locations ?? incident?.locations ?? null,
    },
  };
}

/** An open incident as the loops that tell of it later read it: its row and its probe's URL. */
export type DueIncident = IncidentRow & { url: string | null };

/**
 * Claims the open, unacknowledged incidents whose `column` time has come (oldest first, at most
 * `limit`), with `SKIP LOCKED`: instances running this side by side claim each once. Each comes
 * with its probe's URL and the `fields` of its project's effective policy.
 */
export async function claimDueIncidents<P>(
  trx: Db,
  column: "next_reminder_at" | "next_escalation_at",
  now: Date,
  limit: number,
  fields: AlertPolicyField[],
): Promise<(DueIncident & P)[]> {
  const { rows } = await sql<DueIncident & P>`
    with due as (
      select id from incidents
      where resolved_at is null and acknowledged_at is null
        and ${sql.ref(column)} is not null and ${sql.ref(column)} <= ${now.toISOString()}
      order by ${sql.ref(column)}
      limit ${limit}
      for update skip locked
    )
    select i.*, ${effectivePolicy(...fields)},
      (select p.url from probes p where p.key = i.probe_key) as url
    from incidents i join due on due.id = i.id
    cross join alert_settings g
    left join project_alerts pa on pa.project = i.project`.execute(trx);
  return rows;
}

/** The event of an open incident, as a reminder or an escalation step tells of it. */
export const openIncidentEvent = (type: AlertEventType, at: Date, incident: DueIncident) =>
  eventOf(type, at, {
    incident,
    project: incident.project,
    probeId: incident.probe_id,
    label: incident.label,
    url: incident.url,
    state: "down",
    cause: incident.cause,
    run: { error: incident.last_error },
  });
