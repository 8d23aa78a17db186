import type { Outcome } from "@probe/shared";
import type { ColumnType, Generated, RawBuilder, Selectable } from "kysely";

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A `json` column: read as a parsed value, written as JSON text. */
type Json<T> = ColumnType<T, RawBuilder<string>, RawBuilder<string>>;

export interface ProjectsTable {
  name: string;
  label: string | null;
  description: string | null;
  status: Generated<"enabled" | "disabled">;
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

/** When each probe is next due, and which runner holds it (the runner's tables: issue 6). */
export interface ProbeScheduleTable {
  probe_key: number | string;
  next_due_at: Timestamp;
  lease_until: Timestamp | null;
  leased_by: string | null;
  last_run_at: Timestamp | null;
  last_outcome: Outcome | null;
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
}

export interface ProbeRollupsTable {
  probe_key: number | string;
  hour: Timestamp;
  up: Generated<number>;
  degraded: Generated<number>;
  down: Generated<number>;
  blocked: Generated<number>;
  latency_count: Generated<number>;
  latency_max: number | null;
  latency_buckets: number[];
}

export interface ProbeTombstonesTable {
  probe_key: number | string;
  deleted_at: Generated<Timestamp>;
}

export interface Database {
  projects: ProjectsTable;
  probes: ProbesTable;
  archived_projects: ArchivedProjectsTable;
  iam_alive_settings: IamAliveSettingsTable;
  probe_schedule: ProbeScheduleTable;
  probe_results: ProbeResultsTable;
  probe_rollups: ProbeRollupsTable;
  probe_tombstones: ProbeTombstonesTable;
  iam_alive_deliveries: IamAliveDeliveriesTable;
}

export type ProjectRow = Selectable<ProjectsTable>;
export type ProbeRow = Selectable<ProbesTable>;
