import { z } from "zod";
import { probeState } from "./probe.ts";
import { nameInPath, text } from "./project.ts";

/** How many UTC days the uptime bars of a status page cover, today included. */
export const STATUS_PAGE_DAYS = 90;
/** The most incidents a status page lists (newest first, those of its 90 days). */
export const STATUS_PAGE_INCIDENTS = 50;
export const MAX_STATUS_PAGE_TITLE = 200;
export const MAX_STATUS_PAGE_DESCRIPTION = 2000;
/** The most probes a status page may name (`probe_ids`). */
export const MAX_STATUS_PAGE_PROBES = 500;

/** A project's status page settings until changed: private, untitled, no URLs, no locations. */
export const STATUS_PAGE_DEFAULTS = {
  public: false,
  title: null,
  description: null,
  show_urls: false,
  show_locations: false,
  probe_ids: null,
} as const;

/** Where a project's public status page and its JSON twin are served. */
export const statusPagePaths = (project: string) => ({
  page_path: `/status/${project}`,
  json_path: `/status/${project}/status.json`,
});

export const statusPageRef = z.object({ project: nameInPath });

/** A project's status page settings (`GET /projects/{project}/status-page`). */
export const statusPageSettings = z.object({
  project: z.string(),
  /** Served without a key at `page_path` and `json_path` only when true. */
  public: z.boolean(),
  /** The page's heading; null: the project's label, or its name. */
  title: z.string().nullable(),
  /** A paragraph under the heading; null: none. */
  description: z.string().nullable(),
  /** Whether the page shows probes' URLs (without credentials or query values). */
  show_urls: z.boolean(),
  /** Whether the page names each probe's locations with their states; off, it gives one state. */
  show_locations: z.boolean(),
  /**
   * The probes the page shows, by probe id, in this order; null: every probe of the project. A
   * probe whose method or URL changes gets a new id, which the page does not show until named.
   */
  probe_ids: z.array(z.string()).nullable(),
  page_path: z.string(),
  json_path: z.string(),
  /** When the settings were last changed; null while they are the defaults, never set. */
  updated_at: z.string().nullable(),
});
export type StatusPageSettings = z.infer<typeof statusPageSettings>;

const title = text(MAX_STATUS_PAGE_TITLE).refine((s) => s.trim() !== "", "must not be blank");

/** `PATCH /projects/{project}/status-page`: any of the fields; null puts a text back to its default. */
export const statusPagePatchInput = z.strictObject({
  project: nameInPath,
  public: z.boolean().optional(),
  title: title.nullable().optional(),
  description: text(MAX_STATUS_PAGE_DESCRIPTION).nullable().optional(),
  show_urls: z.boolean().optional(),
  show_locations: z.boolean().optional(),
  probe_ids: z.array(z.string().regex(/^[0-9a-f]{16}$/, "must be a probe id (16 hex digits)"))
    .max(MAX_STATUS_PAGE_PROBES).nullable().optional(),
});
export type StatusPagePatchInput = z.infer<typeof statusPagePatchInput>;

/** One UTC day of a probe's uptime bar, from the hourly rollups. */
export const statusPageDay = z.object({
  /** `YYYY-MM-DD`, UTC. */
  date: z.string(),
  /** Runs counted in uptime (those in maintenance windows are not). */
  runs: z.int(),
  /** Share (0 to 1) of counted runs up or degraded; null without counted runs. */
  uptime: z.number().nullable(),
  /** Runs in maintenance windows: apart, not in `runs` or `uptime`. */
  maintenance: z.int(),
});
export type StatusPageDay = z.infer<typeof statusPageDay>;

export const statusPageProbe = z.object({
  /** The probe's label; its URL when the page shows URLs; else `Check 1`, `Check 2`, … */
  name: z.string(),
  /** The URL without credentials or query values, when the page shows URLs; else null. */
  url: z.string().nullable(),
  state: probeState,
  state_since: z.string().nullable(),
  /** Present (true) while the probe is flapping: shown as unstable. Absent otherwise. */
  flapping: z.literal(true).optional(),
  /**
   * Each location's state, by name, as the probe's state was last decided from them; empty
   * unless the page's settings show locations (`show_locations`).
   */
  locations: z.array(z.object({ location: z.string(), state: probeState })),
  /** Over the page's 90 days; null without counted runs. */
  uptime: z.number().nullable(),
  /** Oldest first, one per UTC day, today last. */
  days: z.array(statusPageDay),
});
export type StatusPageProbe = z.infer<typeof statusPageProbe>;

/** An incident as the public sees it: no error text, no address, no URL. */
export const statusPageIncident = z.object({
  /** The probe's name, as in `probes`. */
  probe: z.string(),
  state: z.enum(["open", "resolved"]),
  started_at: z.string(),
  resolved_at: z.string().nullable(),
  /** Null while open. */
  duration_seconds: z.int().nullable(),
});
export type StatusPageIncident = z.infer<typeof statusPageIncident>;

/** `GET /status/{project}/status.json`: what the public page shows, as data. */
export const publicStatusPage = z.object({
  project: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  /** The worst state of its probes: down, then degraded, unknown, up (unknown without probes). */
  status: probeState,
  /** Whether a maintenance window of the project is under way. */
  in_maintenance: z.boolean(),
  generated_at: z.string(),
  probes: z.array(statusPageProbe),
  /** Newest first: open ones and those that started in the page's 90 days, at most 50. */
  incidents: z.array(statusPageIncident),
  /**
   * How incidents are counted (the project's alert policy): one opens at the failing run that
   * makes `failures` in a row, and is resolved at the passing run that makes `passes` in a row.
   * So `started_at` is that run's start, and an outage began up to `failures - 1` runs earlier.
   */
  incident_rule: z.object({ failures: z.int(), passes: z.int() }),
});
export type PublicStatusPage = z.infer<typeof publicStatusPage>;
