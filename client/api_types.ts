/**
 * The input and output of every operation, derived from the router's type and the shared zod
 * schemas. `deno task build:client` writes these out in full for the npm package, so its
 * declarations need neither the server's source nor zod.
 *
 * @module
 */
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type {
  AuditEntry as SharedAuditEntry,
  ErrorBody,
  TargetKind as SharedTargetKind,
} from "@probe/shared";
import type { AppRouter } from "@probe/server/router";

type Inputs = inferRouterInputs<AppRouter>;
type Outputs = inferRouterOutputs<AppRouter>;

/** A project as read back: name, label, description and status. */
export type Project = Outputs["projects"]["get"]["data"];
/** A probe as read back. */
export type Probe = Outputs["probes"]["get"]["data"];
/** The global I'm alive reporting settings. */
export type IamAliveSettings = Outputs["settings"]["getIamAlive"]["data"];
/** One I'm alive report, the same on every channel. */
export type IamAliveReport = Outputs["settings"]["testIamAlive"]["data"]["report"];
/** The outcome of sending one report over one channel. */
export type IamAliveDelivery = Outputs["settings"]["listIamAliveDeliveries"]["data"][number];
/** One run of a probe as stored: when, how long, its outcome, HTTP status, error and address. */
export type ProbeResult = Outputs["results"]["list"]["data"][number];
/** What a run came to: `up` and `degraded` count towards uptime, `down` and `blocked` do not. */
export type Outcome = ProbeResult["outcome"];
/** A statistics window: `1h`, `24h`, `7d`, `30d` or `90d`. */
export type StatsWindow = Outputs["results"]["stats"]["data"]["window"];
/** A probe's counts per outcome, uptime and latency percentiles over a window. */
export type ProbeStats = Outputs["results"]["stats"]["data"];
/** One probe's line on a project's status board: last outcome and 24-hour uptime. */
export type ProbeStatus = Outputs["results"]["status"]["data"][number];
/** A probe's state from its consecutive runs: `unknown`, `up`, `degraded` or `down`. */
export type ProbeState = Probe["state"];
/**
 * What a run must show to pass: status codes and classes, body strings, JSON and header checks,
 * certificate days (see docs/assertions.md). Every part optional; at most 20 assertions in all.
 */
export type ProbeExpect = NonNullable<Inputs["probes"]["create"]["expect"]>;
/** One assertion a run failed, with what was seen instead (failing runs only). */
export type FailedCheck = NonNullable<ProbeResult["failed_checks"]>[number];
/** Why a run was made: `schedule` (the runner) or `manual` (`probes.run`). */
export type RunTrigger = ProbeResult["trigger"];
/** An incident: a probe went down (open) and, later, came back or changed (resolved). */
export type Incident = Outputs["incidents"]["acknowledge"]["data"];
/** An incident with every notification written for it. */
export type IncidentDetail = Outputs["incidents"]["get"]["data"];
/** One notification of an incident, to one target: its delivery status and attempts. */
export type IncidentNotification = IncidentDetail["notifications"][number];
/** The alert policy: when a probe's state change is notified, and to whom. */
export type AlertPolicy = Outputs["alerts"]["get"]["data"];
/** A project's alert overrides (null inherits the global value) and the policy that applies. */
export type ProjectAlerts = Outputs["alerts"]["getProject"]["data"];
/** A project's own alert values, field by field; null inherits the global policy's. */
export type AlertOverrides = ProjectAlerts["overrides"];
/** A maintenance window of a project: runs starting inside it raise no alerts. */
export type MaintenanceWindow = Outputs["maintenance"]["create"]["data"];
/** A notification target as read: secrets masked, Slack and Discord URLs cut to their host. */
export type NotificationTarget = Outputs["targets"]["get"]["data"];
/**
 * The kinds of notification target that can be created: `webhook`, `slack`, `discord`, `mail`,
 * `pagerduty`, `opsgenie`, `teams`, `google_chat`, `mattermost`, `matrix`, `telegram`, `ntfy`,
 * `pushover`, `gotify`, `twilio_sms` (`targets.kinds()` lists each one's fields).
 */
export type TargetKind = SharedTargetKind;
/** A kind of target with its fields: names, how to ask, required, secret, default. */
export type TargetKindInfo = Outputs["targets"]["kinds"]["data"][number];
/** What a test delivery to a target came to: `delivered`, `failed` or `not_configured`. */
export type TargetTestOutcome = Outputs["targets"]["test"]["data"];
/** The dashboard's overview: the open incidents and every project with its probes. */
export type Overview = Outputs["overview"]["get"]["data"];
/** A project of the overview, with its probes down first. */
export type OverviewProject = Overview["projects"][number];
/**
 * A probe of the overview: state, last run, uptime over 24 hours, 7 and 30 days, p95 latency
 * over 24 hours and the last 24 hours' uptime hour by hour (`sparkline`, null without runs).
 */
export type OverviewProbe = OverviewProject["probes"][number];
/** A series window: `24h` (5-minute buckets), `7d` (hourly), `30d` or `90d` (daily). */
export type SeriesWindow = Outputs["results"]["series"]["data"]["window"];
/** A probe's series: every bucket of the window, oldest first, empty ones included. */
export type Series = Outputs["results"]["series"]["data"];
/** One bucket of a series: runs per outcome, maintenance apart, uptime, p50, p95 and max. */
export type SeriesBucket = Series["buckets"][number];
/**
 * A location as read: kind (`local` or `remote`), label, the probes that run there and its
 * health (runners seen in the last minute, last seen, version, checks per minute, schedule lag).
 */
export type Location = Outputs["locations"]["get"]["data"];
/** A location with its token: answered only when it is made and when its token is rotated. */
export type LocationWithToken = Outputs["locations"]["create"]["data"];
/** Where a location's runners run: `local` (the built-in runners) or `remote` (over the API). */
export type LocationKind = Location["kind"];
/** One line of an error's details: the path of the field and what is wrong with it. */
export type ErrorDetail = NonNullable<ErrorBody["error"]["details"]>[number];

/** `projects.create`: the new project's name, and an optional label and description. */
export type ProjectCreateInput = Inputs["projects"]["create"];
/** `projects.create`: `{ data: { project } }`. */
export type ProjectCreateResult = Outputs["projects"]["create"];
/** `projects.list`: an optional exact project name to filter by. */
export type ProjectListInput = Inputs["projects"]["list"];
/** `projects.list`: `{ data: Project[], meta: { count } }`. */
export type ProjectListResult = Outputs["projects"]["list"];
/** `projects.get` and `projects.delete`: the project's name. */
export type ProjectRef = Inputs["projects"]["get"];
/** `projects.get`: `{ data: Project }`. */
export type ProjectGetResult = Outputs["projects"]["get"];
/** `projects.update`: the project's name and the fields to change (null clears label and description). */
export type ProjectUpdateInput = Inputs["projects"]["update"];
/** `projects.update`: `{ data: { project } }`. */
export type ProjectUpdateResult = Outputs["projects"]["update"];
/** `projects.delete`: what was done, and a message. */
export type ProjectDeleteResult = Outputs["projects"]["delete"];

/** `probes.create`: a probe of the project named in `project` (REST: `POST /projects/{project}/probes`). */
export type ProbeCreateInput = Inputs["probes"]["create"];
/** `probes.createWithProject`: the same, as REST's `POST /probes` takes it. */
export type ProbeCreateWithProjectInput = Inputs["probes"]["createWithProject"];
/** Both probe creates: the probe written, and whether it is new (`meta.created`). */
export type ProbeCreateResult = Outputs["probes"]["create"];
/** `probes.list`: an optional exact project name to filter by. */
export type ProbeListInput = Inputs["probes"]["list"];
/** `probes.list` and `probes.listByProject`: `{ data: Probe[], meta: { count } }`. */
export type ProbeListResult = Outputs["probes"]["list"];
/** `probes.listByProject`: the project's name. */
export type ProbeListByProjectInput = Inputs["probes"]["listByProject"];
/** `probes.get` and `probes.delete`: the project's name and the probe's id. */
export type ProbeRef = Inputs["probes"]["get"];
/** `probes.get`: `{ data: Probe }`. */
export type ProbeGetResult = Outputs["probes"]["get"];
/** `probes.update`: the probe and the fields to change; a new URL or method gives a new id. */
export type ProbeUpdateInput = Inputs["probes"]["update"];
/** `probes.update`: the probe as written, with its (possibly new) id. */
export type ProbeUpdateResult = Outputs["probes"]["update"];

/** `probes.run`: `{ data: ProbeResult }`, the run as recorded, with `trigger: "manual"`. */
export type ProbeRunResult = Outputs["probes"]["run"];

/**
 * `incidents.list`: optional `project` and `state` (`open`, `resolved`), how many (1 to 500,
 * default 50), and `before` (a previous page's `meta.next_before`). The router takes any `limit`
 * and coerces it, as query strings need; the client asks for a number.
 */
export type IncidentListInput = Inputs["incidents"]["list"] & { limit?: number };
/** `incidents.list`: `{ data: Incident[], meta: { count, next_before } }`, newest first. */
export type IncidentListResult = Outputs["incidents"]["list"];
/** `incidents.get` and `incidents.acknowledge`: the incident's id. */
export type IncidentRef = Inputs["incidents"]["get"];
/** `incidents.get`: `{ data: IncidentDetail }`. */
export type IncidentGetResult = Outputs["incidents"]["get"];
/** `incidents.acknowledge`: `{ data: Incident }`, with `acknowledged_at` set. */
export type IncidentAcknowledgeResult = Outputs["incidents"]["acknowledge"];

/** `alerts.get`: `{ data: AlertPolicy }`. */
export type AlertPolicyGetResult = Outputs["alerts"]["get"];
/** `alerts.update`: the fields to change; only `enabled: true` turns alerts on. */
export type AlertPolicyUpdateInput = Inputs["alerts"]["update"];
/** `alerts.update`: the whole policy after the update. */
export type AlertPolicyUpdateResult = Outputs["alerts"]["update"];
/** `alerts.getProject`: the project's name. */
export type ProjectAlertsRef = Inputs["alerts"]["getProject"];
/** `alerts.getProject` and `alerts.updateProject`: `{ data: ProjectAlerts }`. */
export type ProjectAlertsResult = Outputs["alerts"]["getProject"];
/** `alerts.updateProject`: the project and the fields to override (null inherits again). */
export type ProjectAlertsUpdateInput = Inputs["alerts"]["updateProject"];

/** `maintenance.list`: the project, and `state` (`active`, `upcoming`, `past`, `all` by default). */
export type MaintenanceListInput = Inputs["maintenance"]["list"];
/** `maintenance.list`: `{ data: MaintenanceWindow[], meta: { count } }`, by `starts_at`. */
export type MaintenanceListResult = Outputs["maintenance"]["list"];
/** `maintenance.create`: the project, `starts_at` and `ends_at` (ISO 8601 with an offset), `reason`. */
export type MaintenanceCreateInput = Inputs["maintenance"]["create"];
/** `maintenance.create`: `{ data: MaintenanceWindow }`. */
export type MaintenanceCreateResult = Outputs["maintenance"]["create"];
/** `maintenance.delete`: the project and the window's id. */
export type MaintenanceRef = Inputs["maintenance"]["delete"];

/**
 * `targets.create`: a name and a kind, and what the kind has (`targets.kinds()` lists it): `url`
 * and an optional `secret` (webhook), `url` (slack, discord: the URL is the credential),
 * `recipients` (mail), `routing_key` (pagerduty), `bot_token` and `chat_id` (telegram), …
 */
export type TargetCreateInput = Omit<Inputs["targets"]["create"], "kind"> & { kind: TargetKind };
/** `targets.kinds`: `{ data: TargetKindInfo[], meta: { count } }`, in the registry's order. */
export type TargetKindsResult = Outputs["targets"]["kinds"];
/**
 * `targets.create`: `{ data: NotificationTarget }`; for a webhook created without a `secret`,
 * `data.secret` is the generated signing key in full, this once.
 */
export type TargetCreateResult = Outputs["targets"]["create"];
/** `targets.list`: `{ data: NotificationTarget[], meta: { count } }`, `log` first. */
export type TargetListResult = Outputs["targets"]["list"];
/** `targets.get`, `targets.delete` and `targets.test`: the target's name. */
export type TargetRef = Inputs["targets"]["get"];
/** `targets.get`: `{ data: NotificationTarget }`. */
export type TargetGetResult = Outputs["targets"]["get"];
/** `targets.update`: the target's name and the fields its kind has; the kind cannot change. */
export type TargetUpdateInput = Inputs["targets"]["update"];
/** `targets.update`: the target as written, secrets masked. */
export type TargetUpdateResult = Outputs["targets"]["update"];
/** `targets.test`: `{ data: TargetTestOutcome }`. */
export type TargetTestResult = Outputs["targets"]["test"];

/** `settings.getIamAlive`: `{ data: IamAliveSettings }`. */
export type IamAliveGetResult = Outputs["settings"]["getIamAlive"];
/** `settings.updateIamAlive`: the fields to change; interval or channels alone turn reporting on. */
export type IamAliveUpdateInput = Inputs["settings"]["updateIamAlive"];
/** `settings.updateIamAlive`: the settings after the update. */
export type IamAliveUpdateResult = Outputs["settings"]["updateIamAlive"];
/** `settings.testIamAlive`: the report sent and each selected channel's outcome. */
export type IamAliveTestResult = Outputs["settings"]["testIamAlive"];
/**
 * `settings.listIamAliveDeliveries`: how many, newest first (1 to 500, default 50). The router
 * takes any value and coerces it, as query strings need; the client asks for a number.
 */
export type IamAliveDeliveriesInput = Inputs["settings"]["listIamAliveDeliveries"] & {
  limit?: number;
};
/** `settings.listIamAliveDeliveries`: `{ data: IamAliveDelivery[], meta: { count } }`. */
export type IamAliveDeliveriesResult = Outputs["settings"]["listIamAliveDeliveries"];

/**
 * `results.list`: the probe, and how many results (1 to 1000, default 100) older than `before`
 * (an ISO time, for example a previous page's `meta.next_before`). The router takes any `limit`
 * and coerces it, as query strings need; the client asks for a number.
 */
export type ResultsListInput = Inputs["results"]["list"] & { limit?: number };
/** `results.list`: `{ data: ProbeResult[], meta: { count, next_before } }`, newest first. */
export type ResultsListResult = Outputs["results"]["list"];
/** `results.stats`: the probe, and the window (default `24h`). */
export type ResultsStatsInput = Inputs["results"]["stats"];
/** `results.stats`: `{ data: ProbeStats }`. */
export type ResultsStatsResult = Outputs["results"]["stats"];
/** `results.series`: the probe, and the window (default `24h`). */
export type ResultsSeriesInput = Inputs["results"]["series"];
/** `results.series`: `{ data: Series }`. */
export type ResultsSeriesResult = Outputs["results"]["series"];
/** `overview.get`: optionally one project's name. */
export type OverviewGetInput = Inputs["overview"]["get"];
/** `overview.get`: `{ data: Overview, meta: { projects, probes, generated_at } }`. */
export type OverviewGetResult = Outputs["overview"]["get"];
/** `results.status`: the project's name. */
export type ResultsStatusInput = Inputs["results"]["status"];
/** `results.status`: `{ data: ProbeStatus[], meta: { count, status } }`, by URL. */
export type ResultsStatusResult = Outputs["results"]["status"];

/** `statusPages.get`: the project's name. */
export type StatusPageGetInput = Inputs["statusPages"]["get"];
/** `statusPages.get` and `statusPages.update`: `{ data: StatusPageSettings }`. */
export type StatusPageResult = Outputs["statusPages"]["get"];
/** A project's status page settings: `public`, `title`, `description`, `show_urls`, … */
export type StatusPageSettings = StatusPageResult["data"];
/** `statusPages.update`: the project and the fields to change. */
export type StatusPageUpdateInput = Inputs["statusPages"]["update"];
/** `badges.list`: the project's name. */
export type BadgeListInput = Inputs["badges"]["list"];
/** `badges.list`: `{ data: Badge[], meta: { count } }`, each with its token and urls. */
export type BadgeListResult = Outputs["badges"]["list"];
/** `badges.create`: the project and, for a probe's badges, its `probe_id`. */
export type BadgeCreateInput = Inputs["badges"]["create"];
/** `badges.create`: the token and the badge URLs. */
export type BadgeCreateResult = Outputs["badges"]["create"];
/** `badges.rotate` and `badges.delete`: the project and the badge's id. */
export type BadgeRef = Inputs["badges"]["rotate"];
/** `badges.rotate`: the new token; the old one stops at once. */
export type BadgeRotateResult = Outputs["badges"]["rotate"];
/** `whoami.get`: `{ data: { scope } }`, what the key used may do. */
export type WhoamiResult = Outputs["whoami"]["get"];
/** A key's scope: `write` (every operation) or `read` (queries only; the rest answer 403). */
export type KeyScope = WhoamiResult["data"]["scope"];
/** `locations.list`: `{ data: Location[], meta: { count } }`, the built-in location first. */
export type LocationListResult = Outputs["locations"]["list"];
/** `locations.get`, `locations.delete` and `locations.rotateToken`: the location's name. */
export type LocationRef = Inputs["locations"]["get"];
/** `locations.get`: `{ data: Location }`. */
export type LocationGetResult = Outputs["locations"]["get"];
/** `locations.create`: a `name` (the rules of a project name) and an optional `label`. */
export type LocationCreateInput = Inputs["locations"]["create"];
/** `locations.create` and `locations.rotateToken`: `{ data: LocationWithToken }`. */
export type LocationCreateResult = Outputs["locations"]["create"];
/** `locations.update`: the location and its new `label` (null clears it). */
export type LocationUpdateInput = Inputs["locations"]["update"];
/** `locations.update`: `{ data: Location }`. */
export type LocationUpdateResult = Outputs["locations"]["update"];
/**
 * A heartbeat: a URL a job pings (`ping_url`, its token `****` for a read-only key) and the
 * deadline its silence is measured against (docs/heartbeats.md).
 */
export type Heartbeat = Outputs["heartbeats"]["get"]["data"];
/** A heartbeat's state: `new` (no ping and no deadline missed yet), `up` or `down`. */
export type HeartbeatState = Heartbeat["state"];
/** One of a heartbeat's kept pings: its kind, exit code, method, address and body. */
export type HeartbeatPing = Outputs["heartbeats"]["pings"]["data"][number];
/** `heartbeats.create`: a `name`, and `period_seconds` or `schedule` (with `timezone`). */
export type HeartbeatCreateInput = Inputs["heartbeats"]["create"];
/** `heartbeats.create`, `get` and `update`: `{ data: Heartbeat }`. */
export type HeartbeatResult = Outputs["heartbeats"]["get"];
/** `heartbeats.list`: the project, and `limit`/`after` for a page. */
export type HeartbeatListInput = Inputs["heartbeats"]["list"];
/** `heartbeats.list`: `{ data: Heartbeat[], meta: { count, next_after } }`, by name. */
export type HeartbeatListResult = Outputs["heartbeats"]["list"];
/** `heartbeats.get` and `heartbeats.delete`: the project and the heartbeat's name. */
export type HeartbeatRef = Inputs["heartbeats"]["get"];
/** `heartbeats.update`: the fields to change; `period_seconds` replaces a schedule and back. */
export type HeartbeatUpdateInput = Inputs["heartbeats"]["update"];
/** `heartbeats.pings`: the heartbeat, and `limit` (1 to 100). */
export type HeartbeatPingsInput = Inputs["heartbeats"]["pings"];
/** `heartbeats.pings`: `{ data: HeartbeatPing[], meta: { count } }`, the latest first. */
export type HeartbeatPingsResult = Outputs["heartbeats"]["pings"];

/**
 * One change of the audit log: who, when, from where, what, and the fields before and after (by
 * name, secrets masked; null where there is no side). Its schema's own type: tRPC's inferred form
 * of a record of any values names a helper type the package's declarations cannot carry.
 */
export type AuditEntry = SharedAuditEntry;
/**
 * `auditLog.list`: optional `actor`, `resource` (a type such as `probe`, or `probe:web/api-1`),
 * `since` and `before` (ISO 8601 with an offset), and `limit`/`after` for a page.
 */
export type AuditListInput = Inputs["auditLog"]["list"];
/** `auditLog.list`: `{ data: AuditEntry[], meta: { count, next_after } }`, newest first. */
export type AuditListResult = {
  data: AuditEntry[];
  meta: Outputs["auditLog"]["list"]["meta"];
};

/** An API key's record (never the key): role, projects, who made it, expiry, last use. */
export type ApiKey = Outputs["apiKeys"]["get"]["data"];
/** A new or rotated API key: the record and the key (`key`), shown this once. */
export type ApiKeyWithKey = Outputs["apiKeys"]["create"]["data"];
/** `apiKeys.list`: `{ data: ApiKey[], meta: { count } }`, the configured keys first. */
export type ApiKeyListResult = Outputs["apiKeys"]["list"];
/** `apiKeys.get`, `apiKeys.delete` and `apiKeys.rotate`: the key's name. */
export type ApiKeyRef = Inputs["apiKeys"]["get"];
/** `apiKeys.get` and `apiKeys.update`: `{ data: ApiKey }`. */
export type ApiKeyGetResult = Outputs["apiKeys"]["get"];
/** `apiKeys.create`: `name`, `role`, and optional `projects` (each must exist) and `expires_at`. */
export type ApiKeyCreateInput = Inputs["apiKeys"]["create"];
/** `apiKeys.create` and `apiKeys.rotate`: `{ data: ApiKeyWithKey }`. */
export type ApiKeyCreateResult = Outputs["apiKeys"]["create"];
/** `apiKeys.update`: the key's name and the fields to change (null clears projects, expiry). */
export type ApiKeyUpdateInput = Inputs["apiKeys"]["update"];
