import type { EscalationStep, Outcome } from "@probe/shared";
import type { ColumnType, Generated, RawBuilder, Selectable } from "kysely";

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A `json` column: read as a parsed value, written as JSON text. */
type Json<T> = ColumnType<T, RawBuilder<string>, RawBuilder<string>>;

export interface ProjectsTable {
  name: string;
  label: string | null;
  description: string | null;
  status: Generated<"enabled" | "disabled">;
  /** Where its probes without their own run ('' is the built-in location); null: that alone. */
  default_locations: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
}

export interface ProbesTable {
  key: Generated<number | string>;
  project: string;
  probe_id: string;
  url: string;
  method: string;
  headers: Json<Record<string, string>>;
  body: Json<unknown> | null;
  latency: number | null;
  label: string | null;
  /** The probe's assertions (`shared/expect.ts`); null: the default rule. */
  expect: Json<unknown> | null;
  /** How often it runs (s); null: the service-wide `PROBE_INTERVAL_SECONDS`. */
  interval_seconds: number | null;
  /** How long a run may take (ms); null: the service-wide `PROBE_TIMEOUT_MS`. */
  timeout_ms: number | null;
  /** Where it runs ('' is the built-in location); null: its project's `default_locations`. */
  locations: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  /**
   * Characters of its URL, headers, body and assertions as stored (their JSON text as written),
   * kept by the database: what a page of probes weighs, known before it is read.
   */
  stored_chars: ColumnType<number, never, never>;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
}

export interface ArchivedProjectsTable {
  id: Generated<string>;
  project: string;
  snapshot: Json<unknown>;
  archived_at: Generated<Timestamp>;
}

export interface IamAliveSettingsTable {
  id: number;
  enabled: boolean;
  interval_hours: number;
  channels: Json<string[]>;
  updated_at: Generated<Timestamp>;
  /** Counts every report, scheduled or test; a report's number is its idempotency key. */
  report_sequence: Generated<number>;
  last_report_at: ColumnType<Date | null, Date | undefined, Date | null>;
  /** When the next scheduled report is due; null means at once. */
  next_report_at: ColumnType<Date | null, Date | undefined, Date | null>;
}

export interface IamAliveDeliveriesTable {
  id: Generated<number>;
  sequence: number;
  trigger: "schedule" | "test";
  channel: "mail" | "log" | "webhook";
  outcome: "delivered" | "failed" | "not_configured";
  attempts: number;
  error: string | null;
  instance_id: string;
  started_at: ColumnType<Date, Date, never>;
  duration_ms: number;
}

/** When each probe is next due, and which runner holds it (the runner's tables). */
export interface ProbeScheduleTable {
  probe_key: number | string;
  /** The location the row schedules the probe at: '' for the built-in location. */
  location: Generated<string>;
  next_due_at: Timestamp;
  lease_until: Timestamp | null;
  leased_by: string | null;
  last_run_at: Timestamp | null;
  last_outcome: Outcome | null;
  state: Generated<ProbeState>;
  state_since: Timestamp | null;
  /** Consecutive failing runs (down, blocked, failed assertion), and passing ones. */
  fail_streak: Generated<number>;
  pass_streak: Generated<number>;
  /** When a manual run began; null when none is in flight. */
  manual_run_at: Timestamp | null;
  /**
   * The latest the next run may be due, left by a change of the probe's interval while a run
   * was leased; recording that run applies it and clears it (see `rescheduleProbe`).
   */
  due_by: Timestamp | null;
}

export interface ProbeResultsTable {
  id: Generated<number | string>;
  probe_key: number | string;
  due_at: Timestamp;
  started_at: Timestamp;
  duration_ms: number;
  outcome: Outcome;
  http_status: number | null;
  error: string | null;
  address: string | null;
  runner: string;
  /** The location that ran it: '' for the built-in location. */
  location: Generated<string>;
  failed_checks: Json<unknown> | null;
  trigger: Generated<"schedule" | "manual">;
  in_maintenance: Generated<boolean>;
}

export interface ProbeRollupsTable {
  probe_key: number | string;
  location: Generated<string>;
  hour: Timestamp;
  up: Generated<number>;
  degraded: Generated<number>;
  down: Generated<number>;
  blocked: Generated<number>;
  latency_count: Generated<number>;
  latency_max: number | null;
  latency_buckets: number[];
  /** Runs in a maintenance window: counted here only, not in the outcome counts. */
  maintenance: Generated<number>;
}

export type ProbeState = "unknown" | "up" | "degraded" | "down";

export interface IncidentsTable {
  id: Generated<number | string>;
  project: string;
  probe_key: number | string;
  probe_id: string;
  /** The probe's label, or its URL without credentials and query values. */
  label: string;
  started_at: Timestamp;
  cause: string;
  runs_failed: number;
  last_error: string | null;
  resolved_at: Timestamp | null;
  resolution: "recovered" | "changed" | "deleted" | "disabled" | null;
  acknowledged_at: Timestamp | null;
  next_reminder_at: Timestamp | null;
  /** Escalation steps sent so far (the next one's index in the policy's steps). */
  escalation_step: Generated<number>;
  /** When the next escalation step is due; null when none is to come. */
  next_escalation_at: Timestamp | null;
  /** The locations failing, fine and unknown, as the incident last saw them. */
  locations: Json<unknown> | null;
  /** The dependency that was down when it opened, while its notifications wait for it. */
  suppressed_by: number | string | null;
}

export interface AlertSettingsTable {
  id: number;
  enabled: Generated<boolean>;
  targets: Json<string[]>;
  failure_threshold: Generated<number>;
  success_threshold: Generated<number>;
  reminder_minutes: Generated<number>;
  notify_degraded: Generated<boolean>;
  notify_recovered: Generated<boolean>;
  /** 0: a majority of the probe's locations. */
  location_quorum: Generated<number>;
  escalation: Json<EscalationStep[]>;
  /** 0: flapping not watched. */
  flap_changes: Generated<number>;
  flap_minutes: Generated<number>;
  updated_at: Timestamp;
}

/** Per-project overrides of the alert policy: null inherits. */
export interface ProjectAlertsTable {
  project: string;
  enabled: boolean | null;
  targets: Json<string[]> | null;
  failure_threshold: number | null;
  success_threshold: number | null;
  reminder_minutes: number | null;
  notify_degraded: boolean | null;
  notify_recovered: boolean | null;
  /** 0: a majority; null inherits. */
  location_quorum: number | null;
  escalation: Json<EscalationStep[]> | null;
  flap_changes: number | null;
  flap_minutes: number | null;
  updated_at: Timestamp;
}

export interface MaintenanceWindowsTable {
  id: Generated<number | string>;
  project: string;
  starts_at: Timestamp;
  ends_at: Timestamp;
  reason: string | null;
  created_at: Timestamp;
}

export interface NotificationTargetsTable {
  name: string;
  /** A provider's kind (`server/alerting/notify/providers/`). */
  kind: string;
  /** What may be read back: readable settings, and the masks of the secret ones. */
  config: Json<Record<string, unknown>>;
  /** Never read back: the secret settings, as a JSON object (`{"secret":"whsec_…"}`). */
  secret: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface NotificationsTable {
  /** Stable across retries and restarts: the `webhook-id`. */
  id: string;
  event: string;
  target: string;
  incident_id: number | string | null;
  payload: Json<unknown>;
  status: Generated<"pending" | "delivered" | "failed">;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  claimed_by: string | null;
  claimed_until: Timestamp | null;
  last_error: string | null;
  created_at: Timestamp;
  delivered_at: Timestamp | null;
}

export interface NotificationAttemptsTable {
  id: Generated<number | string>;
  notification_id: string;
  attempted_at: Timestamp;
  outcome: "delivered" | "failed";
  error: string | null;
  duration_ms: number;
  instance_id: string;
}

export interface ProbeTombstonesTable {
  probe_key: number | string;
  deleted_at: Timestamp;
}

/** A project's public status page settings; no row means the defaults (private). */
export interface StatusPagesTable {
  project: string;
  public: Generated<boolean>;
  title: string | null;
  description: string | null;
  show_urls: Generated<boolean>;
  show_locations: Generated<boolean>;
  /** The probes the page shows, by probe id, in order; null: every probe of the project. */
  probe_ids: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  updated_at: Generated<Timestamp>;
}

/** A badge token of a probe (`probe_key`) or of a whole project (`probe_key` null). */
export interface BadgeTokensTable {
  id: Generated<number | string>;
  project: string;
  probe_key: number | string | null;
  /** The token's SHA-256 digest, hex: what a badge request is looked up by. */
  token_sha256: string;
  /**
   * The token itself, so its snippet can be copied again (it reveals only its badge); null for
   * a token made before tokens were kept, until the badge is rotated.
   */
  token: string | null;
  created_at: Generated<Timestamp>;
  rotated_at: Timestamp | null;
}

/** A remote location; the built-in one has no row. */
export interface LocationsTable {
  name: string;
  label: string | null;
  kind: Generated<"remote">;
  /** The location token's SHA-256 digest, hex: the token itself is never stored. */
  token_sha256: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A claim of a remote location's runner: its runs' ids name it. */
export interface LocationClaimsTable {
  id: string;
  location: string;
  /** The runner's own name. */
  runner: string;
  issued_at: Timestamp;
}

/** A runner seen at a location ('' for the built-in one). */
export interface LocationRunnersTable {
  location: string;
  runner: string;
  version: string;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
}

/** A probe's state, decided from its locations' states by the quorum. */
export interface ProbeVerdictsTable {
  probe_key: number | string;
  state: Generated<ProbeState>;
  state_since: Timestamp | null;
  /** When one of its locations turns stale: the sweep decides again then. */
  stale_at: Timestamp | null;
  locations: Json<unknown> | null;
  /** The times of its recent state changes (ISO), those within the policy's `flap_minutes`. */
  flap_times: Json<string[]> | null;
  flapping_since: Timestamp | null;
  /** When it counts as stable (and is told so) unless it changes state before. */
  flap_settle_at: Timestamp | null;
}

/** The probes a probe depends on (same project). */
export interface ProbeDependenciesTable {
  probe_key: number | string;
  depends_on: number | string;
}

/** A dashboard session (`server/domain/access/sessions.ts`): its token only as a digest. */
export interface DashboardSessionsTable {
  id: string;
  token_sha256: string;
  /** How it was signed in to: with an API key (`key_sha256`) or single sign-on. */
  kind: "key" | "oidc";
  name: string;
  role: "viewer" | "editor" | "admin";
  /** JSON list of project names, or null for every project. */
  projects: ColumnType<string[] | null, RawBuilder<string> | null, RawBuilder<string> | null>;
  key_sha256: string | null;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  user_agent: string | null;
}

/** An entry of the audit log (`server/domain/audit_log.ts`): only ever added and read. */
export interface AuditLogTable {
  id: Generated<number | string>;
  at: Timestamp;
  actor: string;
  actor_source: string;
  address: string | null;
  user_agent: string | null;
  request_id: string | null;
  operation: string;
  resource_type: string;
  resource_id: string;
  before: ColumnType<Record<string, unknown> | null, RawBuilder<string> | null, never>;
  after: ColumnType<Record<string, unknown> | null, RawBuilder<string> | null, never>;
}

/** An API key made through the API (`server/domain/api_keys.ts`): the key only as a digest. */
export interface ApiKeysTable {
  name: string;
  key_sha256: string;
  role: "viewer" | "editor" | "admin";
  /** JSON list of project names, or null for every project. */
  projects: ColumnType<string[] | null, RawBuilder<string> | null, RawBuilder<string> | null>;
  created_at: Timestamp;
  created_by: string;
  updated_at: Timestamp;
  expires_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  last_used_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
}

export interface Database {
  api_keys: ApiKeysTable;
  audit_log: AuditLogTable;
  dashboard_sessions: DashboardSessionsTable;
  probe_dependencies: ProbeDependenciesTable;
  probe_verdicts: ProbeVerdictsTable;
  locations: LocationsTable;
  location_claims: LocationClaimsTable;
  location_runners: LocationRunnersTable;
  projects: ProjectsTable;
  probes: ProbesTable;
  archived_projects: ArchivedProjectsTable;
  iam_alive_settings: IamAliveSettingsTable;
  probe_schedule: ProbeScheduleTable;
  probe_results: ProbeResultsTable;
  probe_rollups: ProbeRollupsTable;
  probe_tombstones: ProbeTombstonesTable;
  iam_alive_deliveries: IamAliveDeliveriesTable;
  incidents: IncidentsTable;
  alert_settings: AlertSettingsTable;
  project_alerts: ProjectAlertsTable;
  maintenance_windows: MaintenanceWindowsTable;
  notification_targets: NotificationTargetsTable;
  notifications: NotificationsTable;
  notification_attempts: NotificationAttemptsTable;
  status_pages: StatusPagesTable;
  badge_tokens: BadgeTokensTable;
}

export type ProjectRow = Selectable<ProjectsTable>;
export type ProbeRow = Selectable<ProbesTable>;
