import type { Migration } from "kysely/migration";
import * as createCoreTables from "./2026_11_21_120000_create_core_tables.ts";
import * as addIamAliveReporting from "./2026_11_21_140000_add_iam_alive_reporting.ts";
import * as createRunnerTables from "./2026_11_21_150000_create_runner_tables.ts";
import * as addListOrderIndexes from "./2026_11_22_090000_add_list_order_indexes.ts";
import * as addAlerting from "./2026_11_22_100000_add_alerting.ts";
import * as addStatusPagesAndBadges from "./2026_11_22_110000_add_status_pages_and_badges.ts";
import * as addIncidentsProbeIndex from "./2026_11_22_120000_add_incidents_probe_index.ts";
import * as addProbeSchedules from "./2026_11_25_100000_add_probe_schedules.ts";
import * as partitionProbeResults from "./2026_11_25_110000_partition_probe_results.ts";
import * as addLocations from "./2026_11_25_130000_add_locations.ts";
import * as addRemoteRunners from "./2026_11_25_140000_add_remote_runners.ts";
import * as addLocationVerdicts from "./2026_11_25_150000_add_location_verdicts.ts";
import * as addStatusPageProbes from "./2026_11_25_160000_add_status_page_probes.ts";
import * as addProbeStoredChars from "./2026_11_28_120000_add_probe_stored_chars.ts";
import * as addStatusPageShowLocations from "./2026_11_28_200000_add_status_page_show_locations.ts";
import * as keepBadgeTokens from "./2026_11_28_210000_keep_badge_tokens.ts";
import * as addHeartbeats from "./2026_11_29_100000_add_heartbeats.ts";
import * as notificationTargetSettings from "./2026_11_29_110000_notification_target_settings.ts";
import * as addEscalation from "./2026_11_29_120000_add_escalation.ts";
import * as addFlappingAndDependencies from "./2026_11_29_130000_add_flapping_and_dependencies.ts";
import * as addDashboardSessions from "./2026_11_29_140500_add_dashboard_sessions.ts";
import * as addAuditLog from "./2026_11_29_150000_add_audit_log.ts";
import * as addApiKeys from "./2026_11_29_160000_add_api_keys.ts";

/** Every migration, keyed by its timestamped name; Kysely runs them in name order. */
export const migrations: Record<string, Migration> = {
  "2026_11_21_120000_create_core_tables": createCoreTables,
  "2026_11_21_140000_add_iam_alive_reporting": addIamAliveReporting,
  "2026_11_21_150000_create_runner_tables": createRunnerTables,
  "2026_11_22_090000_add_list_order_indexes": addListOrderIndexes,
  "2026_11_22_100000_add_alerting": addAlerting,
  "2026_11_22_110000_add_status_pages_and_badges": addStatusPagesAndBadges,
  "2026_11_22_120000_add_incidents_probe_index": addIncidentsProbeIndex,
  "2026_11_25_100000_add_probe_schedules": addProbeSchedules,
  "2026_11_25_110000_partition_probe_results": partitionProbeResults,
  "2026_11_25_130000_add_locations": addLocations,
  "2026_11_25_140000_add_remote_runners": addRemoteRunners,
  "2026_11_25_150000_add_location_verdicts": addLocationVerdicts,
  "2026_11_25_160000_add_status_page_probes": addStatusPageProbes,
  "2026_11_28_120000_add_probe_stored_chars": addProbeStoredChars,
  "2026_11_28_200000_add_status_page_show_locations": addStatusPageShowLocations,
  "2026_11_28_210000_keep_badge_tokens": keepBadgeTokens,
  "2026_11_29_100000_add_heartbeats": addHeartbeats,
  "2026_11_29_110000_notification_target_settings": notificationTargetSettings,
  "2026_11_29_120000_add_escalation": addEscalation,
  "2026_11_29_130000_add_flapping_and_dependencies": addFlappingAndDependencies,
  "2026_11_29_140500_add_dashboard_sessions": addDashboardSessions,
  "2026_11_29_150000_add_audit_log": addAuditLog,
  "2026_11_29_160000_add_api_keys": addApiKeys,
};
