import { z } from "zod";
import { countMeta } from "./envelope.ts";
import { instant } from "./instant.ts";
import { nameInPath, PROJECT_NAME_PATTERN, text } from "./project.ts";

/** The notification target every service has, whatever is stored: a line in the service's log. */
export const ALERT_LOG_TARGET = "log";

/** The most targets one policy (global or a project's) names. */
export const MAX_ALERT_TARGETS = 20;

/** The bounds of the policy's numbers, and their defaults (`docs/alert_policy.md`). */
export const ALERT_LIMITS = {
  threshold: { min: 1, max: 10 },
  /** 0 (no reminders) or 5 minutes to 7 days. */
  reminderMinutes: { min: 5, max: 10_080 },
  /** 0 (flapping not watched) or 2 to 100 state changes. */
  flapChanges: { min: 2, max: 100 },
  /** The window state changes are counted in, and the quiet that ends flapping: 1 to 1,440. */
  flapMinutes: { min: 1, max: 1_440 },
  /** An escalation step's delay after the incident opened: 1 minute to 7 days. */
  escalationMinutes: { min: 1, max: 10_080 },
  /** The most escalation steps one policy holds. */
  escalationSteps: 5,
} as const;

export const ALERT_DEFAULTS = {
  enabled: true,
  targets: [ALERT_LOG_TARGET],
  failure_threshold: 3,
  success_threshold: 2,
  reminder_minutes: 0,
  notify_degraded: false,
  notify_recovered: true,
  location_quorum: "majority",
  flap_changes: 0,
  flap_minutes: 30,
  escalation: [] as { after_minutes: number; targets: string[] }[],
} as const;

/** A target's name, as notification targets are named (the project name rules). */
export const alertTargetName = z.string().max(64).regex(
  PROJECT_NAME_PATTERN,
  "must start with a letter or digit and hold only letters, digits, '.', '_' and '-'",
);

/**
 * The targets notified: at least one (`enabled: false` is the way to notify nobody), no name
 * twice. Whether each exists is checked against the stored targets when the policy is written.
 */
export const alertTargets = z
  .array(alertTargetName)
  .min(1, "must name at least one target (set enabled to false to notify nobody)")
  .max(MAX_ALERT_TARGETS)
  .superRefine((names, ctx) => {
    const seen = new Set<string>();
    names.forEach((name, i) => {
      if (seen.has(name)) {
        ctx.addIssue({
          code: "custom",
          path: [i],
          input: name,
          message: "must not repeat a target",
        });
      }
      seen.add(name);
    });
  });

const threshold = z.int().min(ALERT_LIMITS.threshold.min).max(ALERT_LIMITS.threshold.max);

/** 0, or 5 to 10,080 minutes; one issue per bad value (the bounds stop the check after them). */
export const reminderMinutes = z.int()
  .min(0, { abort: true })
  .max(ALERT_LIMITS.reminderMinutes.max, { abort: true })
  .refine(
    (m) => m === 0 || m >= ALERT_LIMITS.reminderMinutes.min,
    `must be 0 (no reminders) or from ${ALERT_LIMITS.reminderMinutes.min} to ${ALERT_LIMITS.reminderMinutes.max}`,
  )
  .describe(
    `Minutes between reminders while a probe stays down and unacknowledged: 0 (none) or ${ALERT_LIMITS.reminderMinutes.min} to ${ALERT_LIMITS.reminderMinutes.max}.`,
  );

/**
 * How many of a probe's locations must be down for the probe to be down: a number (1 to 16; more
 * than the probe has means all of them), or `majority` (more than half: 1 of 1, 2 of 2, 2 of 3).
 */
export const locationQuorum = z.union([z.int().min(1).max(16), z.literal("majority")]).describe(
  "How many of a probe's locations must be down for it to be down: 1 to 16 (more than it has: " +
    'all of them), or "majority" (more than half).',
);
export type LocationQuorum = z.infer<typeof locationQuorum>;

/**
 * One escalation step: `targets` are told of the incident (its `probe.down`, with
 * `escalation_step`) when it is still open and unacknowledged `after_minutes` after it opened.
 */
export const escalationStep = z.strictObject({
  after_minutes: z.int().min(ALERT_LIMITS.escalationMinutes.min).max(
    ALERT_LIMITS.escalationMinutes.max,
  ).describe(
    `Minutes after the incident opened: ${ALERT_LIMITS.escalationMinutes.min} to ${ALERT_LIMITS.escalationMinutes.max}.`,
  ),
  targets: alertTargets.describe("The targets told at this step: 1 to 20 names, no repeats."),
});
export type EscalationStep = z.infer<typeof escalationStep>;

/**
 * The escalation steps: at most five, each later than the one before (`after_minutes` strictly
 * increasing); `[]` escalates to no one.
 */
export const escalation = z.array(escalationStep)
  .max(ALERT_LIMITS.escalationSteps)
  .superRefine((steps, ctx) => {
    steps.forEach((step, i) => {
      const before = steps[i - 1]?.after_minutes;
      if (
        i > 0 && typeof step?.after_minutes === "number" && typeof before === "number" &&
        step.after_minutes <= before
      ) {
        ctx.addIssue({
          code: "custom",
          path: [i, "after_minutes"],
          input: step.after_minutes,
          message: "must be more than the step before's after_minutes",
        });
      }
    });
  })
  .describe(
    "Steps that tell more targets while an incident stays open and unacknowledged: at most " +
      `${ALERT_LIMITS.escalationSteps}, after_minutes increasing; [] for none.`,
  );

/** A policy's escalation steps as answered. */
const escalationOut = z.array(z.object({ after_minutes: z.int(), targets: z.array(z.string()) }));

/** 0 (off), or 2 to 100: more state changes than this within `flap_minutes` is flapping. */
export const flapChanges = z.int()
  .min(0, { abort: true })
  .max(ALERT_LIMITS.flapChanges.max, { abort: true })
  .refine(
    (n) => n === 0 || n >= ALERT_LIMITS.flapChanges.min,
    `must be 0 (off) or from ${ALERT_LIMITS.flapChanges.min} to ${ALERT_LIMITS.flapChanges.max}`,
  )
  .describe(
    "A probe changing state more than this many times within flap_minutes is flapping: one " +
      "probe.flapping, then quiet until it is stable for flap_minutes. 0 (the default): off.",
  );

/** The window state changes are counted in, and how long a flapping probe must stay stable. */
export const flapMinutes = z.int().min(ALERT_LIMITS.flapMinutes.min).max(
  ALERT_LIMITS.flapMinutes.max,
).describe(
  "Minutes state changes are counted in for flap_changes, and that a flapping probe must keep " +
    `one state to be stable: ${ALERT_LIMITS.flapMinutes.min} to ${ALERT_LIMITS.flapMinutes.max}.`,
);

const policyFields = {
  enabled: z.boolean(),
  targets: alertTargets,
  failure_threshold: threshold,
  success_threshold: threshold,
  reminder_minutes: reminderMinutes,
  notify_degraded: z.boolean(),
  notify_recovered: z.boolean(),
  location_quorum: locationQuorum,
  escalation,
  flap_changes: flapChanges,
  flap_minutes: flapMinutes,
};

export const ALERT_POLICY_FIELDS = Object.keys(policyFields) as (keyof typeof policyFields)[];
export type AlertPolicyField = (typeof ALERT_POLICY_FIELDS)[number];

/** The alert policy: when a probe's state change is notified, and to whom. */
export const alertPolicy = z.object({
  enabled: z.boolean(),
  targets: z.array(z.string()),
  failure_threshold: z.int(),
  success_threshold: z.int(),
  reminder_minutes: z.int(),
  notify_degraded: z.boolean(),
  notify_recovered: z.boolean(),
  location_quorum: locationQuorum,
  escalation: escalationOut,
  flap_changes: z.int(),
  flap_minutes: z.int(),
});
export type AlertPolicy = z.infer<typeof alertPolicy>;

/** PATCH /settings/alerts: any of the fields; only `enabled: true` turns alerts on. */
export const alertPolicyPatchInput = z.strictObject({
  enabled: policyFields.enabled.optional(),
  targets: policyFields.targets.optional(),
  failure_threshold: policyFields.failure_threshold.optional(),
  success_threshold: policyFields.success_threshold.optional(),
  reminder_minutes: policyFields.reminder_minutes.optional(),
  notify_degraded: policyFields.notify_degraded.optional(),
  notify_recovered: policyFields.notify_recovered.optional(),
  location_quorum: policyFields.location_quorum.optional(),
  escalation: policyFields.escalation.optional(),
  flap_changes: policyFields.flap_changes.optional(),
  flap_minutes: policyFields.flap_minutes.optional(),
});
export type AlertPolicyPatchInput = z.infer<typeof alertPolicyPatchInput>;

/** A project's overrides: each field its own value, or null to inherit the global policy. */
export const alertOverrides = z.object({
  enabled: z.boolean().nullable(),
  targets: z.array(z.string()).nullable(),
  failure_threshold: z.int().nullable(),
  success_threshold: z.int().nullable(),
  reminder_minutes: z.int().nullable(),
  notify_degraded: z.boolean().nullable(),
  notify_recovered: z.boolean().nullable(),
  location_quorum: locationQuorum.nullable(),
  escalation: escalationOut.nullable(),
  flap_changes: z.int().nullable(),
  flap_minutes: z.int().nullable(),
});
export type AlertOverrides = z.infer<typeof alertOverrides>;

/** A project's alerts: what it overrides, and the policy that applies to it. */
export const projectAlerts = z.object({
  project: z.string(),
  overrides: alertOverrides,
  effective: alertPolicy,
});
export type ProjectAlerts = z.infer<typeof projectAlerts>;

export const projectAlertsRef = z.object({ project: nameInPath });

/** PATCH /projects/{project}/alerts: any field, a value to override or null to inherit again. */
export const projectAlertsPatchInput = z.strictObject({
  project: nameInPath,
  enabled: policyFields.enabled.nullable().optional(),
  targets: policyFields.targets.nullable().optional(),
  failure_threshold: policyFields.failure_threshold.nullable().optional(),
  success_threshold: policyFields.success_threshold.nullable().optional(),
  reminder_minutes: policyFields.reminder_minutes.nullable().optional(),
  notify_degraded: policyFields.notify_degraded.nullable().optional(),
  notify_recovered: policyFields.notify_recovered.nullable().optional(),
  location_quorum: policyFields.location_quorum.nullable().optional(),
  escalation: policyFields.escalation.nullable().optional(),
  flap_changes: policyFields.flap_changes.nullable().optional(),
  flap_minutes: policyFields.flap_minutes.nullable().optional(),
});
export type ProjectAlertsPatchInput = z.infer<typeof projectAlertsPatchInput>;

// --- Maintenance windows ---

/** The longest maintenance window: 366 days. */
export const MAX_MAINTENANCE_DAYS = 366;
export const MAX_MAINTENANCE_MS = MAX_MAINTENANCE_DAYS * 86_400_000;
export const MAX_MAINTENANCE_REASON = 500;
/** The most windows one project holds (past ones included): delete old ones to add more. */
export const MAX_MAINTENANCE_WINDOWS = 1000;

export const MAINTENANCE_STATES = ["active", "upcoming", "past"] as const;
export const maintenanceState = z.enum(MAINTENANCE_STATES);
export type MaintenanceState = z.infer<typeof maintenanceState>;

export const maintenanceCreateInput = z.strictObject({
  project: nameInPath,
  starts_at: instant,
  ends_at: instant,
  reason: text(MAX_MAINTENANCE_REASON).nullable().optional(),
}).superRefine((input, ctx) => {
  // A time that is not one has its own issue already (format issues do not stop refinements).
  if (!instant.safeParse(input.starts_at).success || !instant.safeParse(input.ends_at).success) {
    return;
  }
  const starts = Date.parse(input.starts_at);
  const ends = Date.parse(input.ends_at);
  if (ends <= starts) {
    ctx.addIssue({
      code: "custom",
      path: ["ends_at"],
      input: input.ends_at,
      message: "must be after starts_at",
    });
  } else if (ends - starts > MAX_MAINTENANCE_MS) {
    ctx.addIssue({
      code: "custom",
      path: ["ends_at"],
      input: input.ends_at,
      message: `must be at most ${MAX_MAINTENANCE_DAYS} days after starts_at`,
    });
  }
});
export type MaintenanceCreateInput = z.infer<typeof maintenanceCreateInput>;

export const maintenanceListInput = z.object({
  project: nameInPath,
  state: z.enum([...MAINTENANCE_STATES, "all"]).default("all").describe(
    "`active` (under way now), `upcoming` (not started), `past` (ended) or `all` (the default).",
  ),
});
export type MaintenanceListInput = z.infer<typeof maintenanceListInput>;

export const maintenanceRef = z.object({ project: nameInPath, id: z.string() });
export type MaintenanceRef = z.infer<typeof maintenanceRef>;

/** A maintenance window: runs inside `[starts_at, ends_at)` are recorded as in maintenance. */
export const maintenanceWindow = z.object({
  id: z.string(),
  project: z.string(),
  starts_at: z.string(),
  ends_at: z.string(),
  reason: z.string().nullable(),
  /** At the time of the answer. */
  state: maintenanceState,
  created_at: z.string(),
});
export type MaintenanceWindow = z.infer<typeof maintenanceWindow>;

export const maintenanceListMeta = countMeta;
