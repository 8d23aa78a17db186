import { createTRPCClient, httpLink } from "@trpc/client";
import type { AppRouter } from "@probe/server/router";
import type {
  AlertPolicyGetResult,
  AlertPolicyUpdateInput,
  AlertPolicyUpdateResult,
  ApiKeyCreateInput,
  ApiKeyCreateResult,
  ApiKeyGetResult,
  ApiKeyListResult,
  ApiKeyRef,
  ApiKeyUpdateInput,
  AuditListInput,
  AuditListResult,
  BadgeCreateInput,
  BadgeCreateResult,
  BadgeListInput,
  BadgeListResult,
  BadgeRef,
  BadgeRotateResult,
  HeartbeatCreateInput,
  HeartbeatListInput,
  HeartbeatListResult,
  HeartbeatPingsInput,
  HeartbeatPingsResult,
  HeartbeatRef,
  HeartbeatResult,
  HeartbeatUpdateInput,
  IamAliveDeliveriesInput,
  IamAliveDeliveriesResult,
  IamAliveGetResult,
  IamAliveTestResult,
  IamAliveUpdateInput,
  IamAliveUpdateResult,
  IncidentAcknowledgeResult,
  IncidentGetResult,
  IncidentListInput,
  IncidentListResult,
  IncidentRef,
  LocationCreateInput,
  LocationCreateResult,
  LocationGetResult,
  LocationListResult,
  LocationRef,
  LocationUpdateInput,
  LocationUpdateResult,
  MaintenanceCreateInput,
  MaintenanceCreateResult,
  MaintenanceListInput,
  MaintenanceListResult,
  MaintenanceRef,
  OverviewGetInput,
  OverviewGetResult,
  ProbeCreateInput,
  ProbeCreateResult,
  ProbeCreateWithProjectInput,
  ProbeGetResult,
  ProbeListByProjectInput,
  ProbeListInput,
  ProbeListResult,
  ProbeRef,
  ProbeRunResult,
  ProbeUpdateInput,
  ProbeUpdateResult,
  ProjectAlertsRef,
  ProjectAlertsResult,
  ProjectAlertsUpdateInput,
  ProjectCreateInput,
  ProjectCreateResult,
  ProjectDeleteResult,
  ProjectGetResult,
  ProjectListInput,
  ProjectListResult,
  ProjectRef,
  ProjectUpdateInput,
  ProjectUpdateResult,
  ResultsListInput,
  ResultsListResult,
  ResultsSeriesInput,
  ResultsSeriesResult,
  ResultsStatsInput,
  ResultsStatsResult,
  ResultsStatusInput,
  ResultsStatusResult,
  StatusPageGetInput,
  StatusPageResult,
  StatusPageUpdateInput,
  TargetCreateInput,
  TargetCreateResult,
  TargetGetResult,
  TargetKindsResult,
  TargetListResult,
  TargetRef,
  TargetTestResult,
  TargetUpdateInput,
  TargetUpdateResult,
  WhoamiResult,
} from "./api_types.ts";
import { ProbeApiError, toProbeApiError } from "./error.ts";

/** How to reach the service. */
export interface ProbeClientOptions {
  /** The service's root URL, for example `http://127.0.0.1:8000` (no `/api/v1`). */
  baseUrl: string;
  /** Sent as the `X-Service-Api-Key` header on every call. */
  apiKey: string;
  /** The fetch to use; the global `fetch` when omitted. */
  fetch?: typeof fetch;
}

/** Projects: create, read, list, update, delete. */
export interface ProjectsApi {
  /** Creates a project; rejects with code `conflict` (409) when the name is taken. */
  create(input: ProjectCreateInput): Promise<ProjectCreateResult>;
  /** Lists projects, optionally only the one with the exact name given. */
  list(input?: ProjectListInput): Promise<ProjectListResult>;
  /** Reads one project; rejects with code `not_found` (404) when there is none. */
  get(input: ProjectRef): Promise<ProjectGetResult>;
  /** Changes label, description or status; `null` clears label or description. */
  update(input: ProjectUpdateInput): Promise<ProjectUpdateResult>;
  /** Archives the project and its probes, then deletes them. */
  delete(input: ProjectRef): Promise<ProjectDeleteResult>;
}

/** Probes: HTTP checks under a project. */
export interface ProbesApi {
  /** Creates a probe, or rewrites the project's probe for the same URL (`meta.created` false). */
  create(input: ProbeCreateInput): Promise<ProbeCreateResult>;
  /** The same as `create`, through the operation REST serves at `POST /probes`. */
  createWithProject(input: ProbeCreateWithProjectInput): Promise<ProbeCreateResult>;
  /** Lists the probes of all projects, or of the one named. */
  list(input?: ProbeListInput): Promise<ProbeListResult>;
  /** Lists the probes of one project. */
  listByProject(input: ProbeListByProjectInput): Promise<ProbeListResult>;
  /** Reads one probe; rejects with code `not_found` (404) when there is none. */
  get(input: ProbeRef): Promise<ProbeGetResult>;
  /** Rewrites a probe; a new URL or method gives it a new `probe_id`, returned here. */
  update(input: ProbeUpdateInput): Promise<ProbeUpdateResult>;
  /** Deletes a probe. */
  delete(input: ProbeRef): Promise<void>;
  /**
   * Runs the probe once, now, with the runner's executor and its assertions, and answers the
   * result as recorded (`trigger: "manual"`; it counts toward the state and uptime like any run).
   * Rejects with `not_found` (404) when there is no such probe, and with `conflict` (409) while
   * another manual run of it is in flight or when its project is disabled.
   */
  run(input: ProbeRef): Promise<ProbeRunResult>;
}

/** What the probe runner recorded: results, statistics and a project's status board. */
export interface ResultsApi {
  /**
   * Lists a probe's results, newest first, `limit` at a time (default 100). Pass
   * `meta.next_before` as `before` for the next page; it is `null` on the last one. Rejects with
   * code `not_found` (404) when there is no such probe.
   */
  list(input: ResultsListInput): Promise<ResultsListResult>;
  /**
   * A probe's runs per outcome, uptime and latency percentiles over a window ending now
   * (`1h`, `24h` by default, `7d`, `30d`, `90d`). Rejects with `not_found` (404) when there is no
   * such probe.
   */
  stats(input: ResultsStatsInput): Promise<ResultsStatsResult>;
  /**
   * Each probe of a project with its last outcome and 24-hour uptime, and whether the project's
   * probes run at all (`meta.status`). Rejects with `not_found` (404) when there is no such project.
   */
  status(input: ResultsStatusInput): Promise<ResultsStatusResult>;
  /**
   * A probe's runs per outcome, uptime and latency (p50, p95, max) bucket by bucket over a window
   * ending now, for charts: `24h` (default: 288 five-minute buckets, exact percentiles), `7d`
   * (168 hourly buckets), `30d` and `90d` (daily buckets, UTC), the last three with percentiles
   * estimated from hourly histograms. Every bucket, oldest first, empty ones included. Rejects
   * with `not_found` (404) when there is no such probe.
   */
  series(input: ResultsSeriesInput): Promise<ResultsSeriesResult>;
}

/** The dashboard's overview. */
export interface OverviewApi {
  /**
   * Every project (or the one named) with every probe's state, last run, uptime over 24 hours,
   * 7 and 30 days, p95 latency over 24 hours and hourly sparkline, down first; and the open
   * incidents, newest first (at most 100). One request, however many probes. Rejects with
   * `not_found` (404) when the project named does not exist.
   */
  get(input?: OverviewGetInput): Promise<OverviewGetResult>;
}

/** The global I'm alive settings. */
export interface SettingsApi {
  /** Reads the I'm alive settings. */
  getIamAlive(): Promise<IamAliveGetResult>;
  /** Changes them; `interval_hours` or `channels` without `enabled` turns reporting on. */
  updateIamAlive(input: IamAliveUpdateInput): Promise<IamAliveUpdateResult>;
  /**
   * Sends one report now over the selected channels, enabled or not; answers each channel's
   * outcome. Rejects with code `service_unavailable` (503) where no reporter runs.
   */
  testIamAlive(): Promise<IamAliveTestResult>;
  /** Lists recent deliveries, newest first: one per report and channel. */
  listIamAliveDeliveries(input?: IamAliveDeliveriesInput): Promise<IamAliveDeliveriesResult>;
}

/** Incidents: a probe went down (open), then recovered, changed or went away (resolved). */
export interface IncidentsApi {
  /**
   * Lists incidents, newest first, `limit` at a time (1 to 500, default 50), optionally of one
   * project and in one state. Pass `meta.next_before` as `before` for the next page; it is `null`
   * on the last one.
   */
  list(input?: IncidentListInput): Promise<IncidentListResult>;
  /** Reads one incident with its notifications; rejects with `not_found` (404) when there is none. */
  get(input: IncidentRef): Promise<IncidentGetResult>;
  /**
   * Acknowledges an open incident: its reminders stop. Again changes nothing; a resolved incident
   * rejects with `conflict` (409), an unknown one with `not_found` (404).
   */
  acknowledge(input: IncidentRef): Promise<IncidentAcknowledgeResult>;
}

/** The alert policy: global, and each project's overrides of it. */
export interface AlertsApi {
  /** Reads the global alert policy. */
  get(): Promise<AlertPolicyGetResult>;
  /**
   * Changes the fields given; only `enabled: true` turns alerts on. Every target named must exist
   * (a `validation_failed` 422 at `targets.N` otherwise); `{}` is a 422 too.
   */
  update(input: AlertPolicyUpdateInput): Promise<AlertPolicyUpdateResult>;
  /**
   * Reads a project's overrides (null inherits the global value) and the policy in effect for it.
   * Rejects with `not_found` (404) when there is no such project.
   */
  getProject(input: ProjectAlertsRef): Promise<ProjectAlertsResult>;
  /** Overrides fields for a project: a value overrides, `null` inherits the global value again. */
  updateProject(input: ProjectAlertsUpdateInput): Promise<ProjectAlertsResult>;
}

/** Maintenance windows: spans of time in which a project's runs raise no alerts. */
export interface MaintenanceApi {
  /** Lists a project's windows by `starts_at`; `state` picks `active`, `upcoming` or `past`. */
  list(input: MaintenanceListInput): Promise<MaintenanceListResult>;
  /**
   * Adds a window `[starts_at, ends_at)` (ISO 8601 with an offset, at most 366 days). Rejects with
   * `not_found` (404) for a missing project, `conflict` (409) past 1,000 windows.
   */
  create(input: MaintenanceCreateInput): Promise<MaintenanceCreateResult>;
  /** Deletes a window; rejects with `not_found` (404) when the project holds no such window. */
  delete(input: MaintenanceRef): Promise<void>;
}

/** Notification targets: where alerts go. Secrets are write-only. */
export interface TargetsApi {
  /**
   * Creates a target. A webhook created without `secret` gets a generated signing key, answered
   * in full this once (`data.secret`). Rejects with `conflict` (409) when the name is taken.
   */
  create(input: TargetCreateInput): Promise<TargetCreateResult>;
  /** Lists the targets: the built-in `log` first, then the stored ones by name. */
  list(): Promise<TargetListResult>;
  /** Reads one target, secrets masked; rejects with `not_found` (404) when there is none. */
  get(input: TargetRef): Promise<TargetGetResult>;
  /** Changes `url`, `secret` or `recipients` (what the kind has); `log` rejects with 409. */
  update(input: TargetUpdateInput): Promise<TargetUpdateResult>;
  /** Deletes a target; rejects with `conflict` (409) while an alert policy names it. */
  delete(input: TargetRef): Promise<void>;
  /**
   * Sends one test event to the target now (one attempt) and answers its outcome. Rejects with
   * `not_found` (404) for an unknown name.
   */
  test(input: TargetRef): Promise<TargetTestResult>;
  /** The kinds a target may have, each with its fields (secret ones are never read back). */
  kinds(): Promise<TargetKindsResult>;
}

/** Public status pages: their settings (the pages themselves are at `/status/{project}`). */
export interface StatusPagesApi {
  /** Reads a project's page settings; rejects with `not_found` (404) for a missing project. */
  get(input: StatusPageGetInput): Promise<StatusPageResult>;
  /** Changes `public`, `title`, `description` or `show_urls`. */
  update(input: StatusPageUpdateInput): Promise<StatusPageResult>;
}

/** Badge tokens of a project or of one of its probes; a token is answered only when made. */
export interface BadgesApi {
  list(input: BadgeListInput): Promise<BadgeListResult>;
  /** Makes a token (for the project, or for `probe_id`); rejects with 409 past 100 tokens. */
  create(input: BadgeCreateInput): Promise<BadgeCreateResult>;
  /** Replaces a token: the old one stops at once. */
  rotate(input: BadgeRef): Promise<BadgeRotateResult>;
  delete(input: BadgeRef): Promise<void>;
}

/**
 * Locations: the places probes run from (docs/locations.md). The built-in one (`local`, or
 * `RUNNER_LOCATION`) is always there and cannot be changed; remote ones have a token, answered
 * only by `create` and `rotateToken`.
 */
export interface LocationsApi {
  /** Every location with its health: the built-in one first, then the remote ones by name. */
  list(): Promise<LocationListResult>;
  /** Reads one location; rejects with `not_found` (404) when there is none. */
  get(input: LocationRef): Promise<LocationGetResult>;
  /**
   * Creates a remote location and answers its token (`data.token`) this once. Rejects with
   * `conflict` (409) for a taken name or the built-in location's.
   */
  create(input: LocationCreateInput): Promise<LocationCreateResult>;
  /** Changes its `label` (null clears it); the built-in location rejects with 409. */
  update(input: LocationUpdateInput): Promise<LocationUpdateResult>;
  /** Deletes a remote location; rejects with `conflict` (409) while a probe or project names it. */
  delete(input: LocationRef): Promise<void>;
  /** Replaces its token: the new one is in this answer only, the old one stops at once. */
  rotateToken(input: LocationRef): Promise<LocationCreateResult>;
}

/**
 * Heartbeats: a URL a job pings, and an alert when it falls silent past its deadline, fails, or
 * runs too long or too short (docs/heartbeats.md). Jobs ping with plain HTTP, not this client.
 */
export interface HeartbeatsApi {
  /**
   * Makes a heartbeat and answers it with its `ping_url`. Rejects with `not_found` (404) for a
   * missing project, `conflict` (409) for a name the project has, `validation_failed` (422) for
   * both or neither of `period_seconds` and `schedule`, a bad cron expression or time zone.
   */
  create(input: HeartbeatCreateInput): Promise<HeartbeatResult>;
  /** A project's heartbeats by name, all of them or a page (`limit`, `after`). */
  list(input: HeartbeatListInput): Promise<HeartbeatListResult>;
  /** Reads one heartbeat; rejects with `not_found` (404) when there is none. */
  get(input: HeartbeatRef): Promise<HeartbeatResult>;
  /** Changes its timing; the deadline is counted again from the last success. */
  update(input: HeartbeatUpdateInput): Promise<HeartbeatResult>;
  /** Deletes it: its ping URL answers 404 from then on, its open incident is resolved. */
  delete(input: HeartbeatRef): Promise<void>;
  /** Its latest pings (the last 100 are kept), the latest first, each with its body. */
  pings(input: HeartbeatPingsInput): Promise<HeartbeatPingsResult>;
}

/** The key in use. */
export interface WhoamiApi {
  /**
   * What the key may do: `write` (every operation) or `read` (a key of
   * `SERVICE_API_KEYS_READONLY`: queries only, every other operation rejects with `forbidden`,
   * 403). Rejects with `unauthorized` (401) for a key the service does not know.
   */
  get(): Promise<WhoamiResult>;
}

/** The audit log: every change made through the API, and the operator's restores. */
export interface AuditLogApi {
  /**
   * Lists entries newest first, filtered by `actor`, `resource`, `since` and `before`; a page of
   * `limit` (1 to 1,000) continued by `after` (`meta.next_after`), or every entry without
   * `limit`. Rejects with `forbidden` (403) for a key or user that is not an admin.
   */
  list(input?: AuditListInput): Promise<AuditListResult>;
}

/**
 * API keys made through the API (docs/access.md), each with a role and optionally limited to
 * projects; admin keys only (others reject with `forbidden`, 403). The key itself is answered
 * by `create` and `rotate` only.
 */
export interface ApiKeysApi {
  /** Every key's record: the configured ones (`configured: true`) first, then the others. */
  list(): Promise<ApiKeyListResult>;
  /** Reads one record; rejects with `not_found` (404) when there is none. */
  get(input: ApiKeyRef): Promise<ApiKeyGetResult>;
  /**
   * Makes a key and answers it (`data.key`) this once. Rejects with `conflict` (409) for a taken
   * name, `validation_failed` (422) for a project that does not exist or a past expiry.
   */
  create(input: ApiKeyCreateInput): Promise<ApiKeyCreateResult>;
  /** Changes its role, projects or expiry; a configured key rejects with 409. */
  update(input: ApiKeyUpdateInput): Promise<ApiKeyGetResult>;
  /** Deletes it: the key stops within a second everywhere. */
  delete(input: ApiKeyRef): Promise<void>;
  /** Replaces the key: the new one is in this answer only, the old one stops. */
  rotate(input: ApiKeyRef): Promise<ApiKeyCreateResult>;
}

/** Every operation of the probe service. Failures reject with a `ProbeApiError`. */
export interface ProbeClient {
  projects: ProjectsApi;
  probes: ProbesApi;
  results: ResultsApi;
  settings: SettingsApi;
  incidents: IncidentsApi;
  alerts: AlertsApi;
  maintenance: MaintenanceApi;
  targets: TargetsApi;
  overview: OverviewApi;
  statusPages: StatusPagesApi;
  badges: BadgesApi;
  locations: LocationsApi;
  heartbeats: HeartbeatsApi;
  whoami: WhoamiApi;
  apiKeys: ApiKeysApi;
  auditLog: AuditLogApi;
}

/**
 * Creates a client for the probe service. Calls go to its `/trpc` endpoint, one HTTP request
 * each, and answer with the same `{ data, meta }` shapes as the REST API.
 *
 * @example
 * ```ts ignore
 * const client = createProbeClient({ baseUrl: "http://127.0.0.1:8000", apiKey: "my-key" });
 * const { data } = await client.projects.get({ project: "shop" });
 * ```
 */
export function createProbeClient(options: ProbeClientOptions): ProbeClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  const trpc = createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${baseUrl}/trpc`,
        headers: { "x-service-api-key": options.apiKey },
        fetch: async (input, init) => {
          let response: Response;
          try {
            response = await fetchImpl(input, init as RequestInit);
          } catch (cause) {
            throw new ProbeApiError({
              status: 0,
              code: "network_error",
              message: `Could not reach the probe service at ${baseUrl}: ${errorMessage(cause)}`,
            }, { cause });
          }
          // The service answers JSON, always; anything else came from something in between.
          if (!/\bjson\b/i.test(response.headers.get("content-type") ?? "")) {
            await response.body?.cancel();
            throw new ProbeApiError({
              status: response.status,
              code: "unexpected_response",
              message: `${baseUrl} answered ${response.status} without the service's JSON`,
            });
          }
          return response;
        },
      }),
    ],
  });

  async function call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toProbeApiError(error);
    }
  }

  return {
    projects: {
      create: (input) => call(() => trpc.projects.create.mutate(input)),
      list: (input = {}) => call(() => trpc.projects.list.query(input)),
      get: (input) => call(() => trpc.projects.get.query(input)),
      update: (input) => call(() => trpc.projects.update.mutate(input)),
      delete: (input) => call(() => trpc.projects.delete.mutate(input)),
    },
    probes: {
      create: (input) => call(() => trpc.probes.create.mutate(input)),
      createWithProject: (input) => call(() => trpc.probes.createWithProject.mutate(input)),
      list: (input = {}) => call(() => trpc.probes.list.query(input)),
      listByProject: (input) => call(() => trpc.probes.listByProject.query(input)),
      get: (input) => call(() => trpc.probes.get.query(input)),
      update: (input) => call(() => trpc.probes.update.mutate(input)),
      delete: (input) => call(() => trpc.probes.delete.mutate(input)),
      run: (input) => call(() => trpc.probes.run.mutate(input)),
    },
    results: {
      list: (input) => call(() => trpc.results.list.query(input)),
      stats: (input) => call(() => trpc.results.stats.query(input)),
      status: (input) => call(() => trpc.results.status.query(input)),
      series: (input) => call(() => trpc.results.series.query(input)),
    },
    settings: {
      getIamAlive: () => call(() => trpc.settings.getIamAlive.query({})),
      updateIamAlive: (input) => call(() => trpc.settings.updateIamAlive.mutate(input)),
      testIamAlive: () => call(() => trpc.settings.testIamAlive.mutate({})),
      listIamAliveDeliveries: (input = {}) =>
        call(() => trpc.settings.listIamAliveDeliveries.query(input)),
    },
    incidents: {
      list: (input = {}) => call(() => trpc.incidents.list.query(input)),
      get: (input) => call(() => trpc.incidents.get.query(input)),
      acknowledge: (input) => call(() => trpc.incidents.acknowledge.mutate(input)),
    },
    alerts: {
      get: () => call(() => trpc.alerts.get.query({})),
      update: (input) => call(() => trpc.alerts.update.mutate(input)),
      getProject: (input) => call(() => trpc.alerts.getProject.query(input)),
      updateProject: (input) => call(() => trpc.alerts.updateProject.mutate(input)),
    },
    maintenance: {
      list: (input) => call(() => trpc.maintenance.list.query(input)),
      create: (input) => call(() => trpc.maintenance.create.mutate(input)),
      delete: (input) => call(() => trpc.maintenance.delete.mutate(input)),
    },
    targets: {
      create: (input) => call(() => trpc.targets.create.mutate(input)),
      list: () => call(() => trpc.targets.list.query({})),
      get: (input) => call(() => trpc.targets.get.query(input)),
      update: (input) => call(() => trpc.targets.update.mutate(input)),
      delete: (input) => call(() => trpc.targets.delete.mutate(input)),
      test: (input) => call(() => trpc.targets.test.mutate(input)),
      kinds: () => call(() => trpc.targets.kinds.query({})),
    },
    overview: {
      get: (input = {}) => call(() => trpc.overview.get.query(input)),
    },
    statusPages: {
      get: (input) => call(() => trpc.statusPages.get.query(input)),
      update: (input) => call(() => trpc.statusPages.update.mutate(input)),
    },
    badges: {
      list: (input) => call(() => trpc.badges.list.query(input)),
      create: (input) => call(() => trpc.badges.create.mutate(input)),
      rotate: (input) => call(() => trpc.badges.rotate.mutate(input)),
      delete: (input) => call(() => trpc.badges.delete.mutate(input)),
    },
    locations: {
      list: () => call(() => trpc.locations.list.query({})),
      get: (input) => call(() => trpc.locations.get.query(input)),
      create: (input) => call(() => trpc.locations.create.mutate(input)),
      update: (input) => call(() => trpc.locations.update.mutate(input)),
      delete: (input) => call(() => trpc.locations.delete.mutate(input)),
      rotateToken: (input) => call(() => trpc.locations.rotateToken.mutate(input)),
    },
    heartbeats: {
      create: (input) => call(() => trpc.heartbeats.create.mutate(input)),
      list: (input) => call(() => trpc.heartbeats.list.query(input)),
      get: (input) => call(() => trpc.heartbeats.get.query(input)),
      update: (input) => call(() => trpc.heartbeats.update.mutate(input)),
      delete: (input) => call(() => trpc.heartbeats.delete.mutate(input)),
      pings: (input) => call(() => trpc.heartbeats.pings.query(input)),
    },
    whoami: {
      get: () => call(() => trpc.whoami.get.query({})),
    },
    apiKeys: {
      list: () => call(() => trpc.apiKeys.list.query({})),
      get: (input) => call(() => trpc.apiKeys.get.query(input)),
      create: (input) => call(() => trpc.apiKeys.create.mutate(input)),
      update: (input) => call(() => trpc.apiKeys.update.mutate(input)),
      delete: (input) => call(() => trpc.apiKeys.delete.mutate(input)),
      rotate: (input) => call(() => trpc.apiKeys.rotate.mutate(input)),
    },
    auditLog: {
      list: (input = {}) => call(() => trpc.auditLog.list.query(input)),
    },
  };
}

const errorMessage = (error: unknown) => error instanceof Error ? error.message : String(error);
