import { z } from "zod";
import { iamAliveChannel } from "./settings.ts";

/** Why a report went out: its interval came round, or someone asked for a test. */
export const iamAliveTrigger = z.enum(["schedule", "test"]);
export type IamAliveTrigger = z.infer<typeof iamAliveTrigger>;

/**
 * What the probe runner did since the previous report. `runs` and `failures` are counts; any
 * other figure (such as `slip_p99_ms`, how late scheduled runs started) is a number.
 */
export const iamAliveRunnerFigures = z
  .object({
    runs: z.int().min(0),
    failures: z.int().min(0),
    slip_p99_ms: z.number().optional(),
  })
  .catchall(z.number());
export type IamAliveRunnerFigures = z.infer<typeof iamAliveRunnerFigures>;

/** One I'm alive report: the same JSON on every channel. */
export const iamAliveReport = z.object({
  type: z.literal("iam_alive"),
  /** Counts every report of the service; webhooks get it as their idempotency key. */
  sequence: z.int(),
  trigger: iamAliveTrigger,
  time: z.iso.datetime(),
  /** The time of the previous scheduled report; null before the first. */
  since: z.iso.datetime().nullable(),
  version: z.string(),
  instance_id: z.string(),
  uptime_seconds: z.int(),
  interval_hours: z.int(),
  counts: z.object({ projects: z.int(), probes: z.int() }),
  /** Present when the probe runner runs in this service. */
  runner: iamAliveRunnerFigures.optional(),
});
export type IamAliveReport = z.infer<typeof iamAliveReport>;

export const IAM_ALIVE_OUTCOMES = ["delivered", "failed", "not_configured"] as const;
export const iamAliveOutcome = z.enum(IAM_ALIVE_OUTCOMES);
export type IamAliveOutcome = z.infer<typeof iamAliveOutcome>;

/** The outcome of sending one report over one channel. */
export const iamAliveDelivery = z.object({
  time: z.iso.datetime(),
  sequence: z.int(),
  trigger: iamAliveTrigger,
  channel: iamAliveChannel,
  outcome: iamAliveOutcome,
  attempts: z.int(),
  error: z.string().nullable(),
  duration_ms: z.int(),
  instance_id: z.string(),
});
export type IamAliveDelivery = z.infer<typeof iamAliveDelivery>;

export const MAX_DELIVERIES_LIMIT = 500;

/** Query of the deliveries list; numbers come as query strings, hence the coercion. */
export const iamAliveDeliveriesInput = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_DELIVERIES_LIMIT).default(50),
});
export type IamAliveDeliveriesInput = z.infer<typeof iamAliveDeliveriesInput>;

/** The answer to a test send: the report and how each selected channel fared. */
export const iamAliveTestResult = z.object({
  report: iamAliveReport,
  deliveries: z.array(iamAliveDelivery),
});
export type IamAliveTestResult = z.infer<typeof iamAliveTestResult>;
