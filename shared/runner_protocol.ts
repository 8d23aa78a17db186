/**
 * The runner protocol: what a remote location's runners send and get. A runner
 * presents its location's token; it claims due runs (each with a run id and a lease) and posts
 * their results. Every bound here is enforced by the service (422 past it).
 *
 * @module
 */
import { z } from "zod";
import { postedFailedCheck, probeExpect } from "./expect.ts";
import { inInstantRange, instant } from "./instant.ts";
import { outcome } from "./results.ts";
import { text } from "./project.ts";

/** The most runs one claim answers, and the most results one post carries. */
export const MAX_CLAIM_BATCH = 1000;
export const MAX_RESULTS_BATCH = 1000;
/** The longest a claim waits for due runs (long-polling). */
export const MAX_CLAIM_WAIT_SECONDS = 25;

/** A runner's own name: the same through its life, unique among its location's runners. */
export const runnerId = z.string().min(1).max(64).regex(
  /^[A-Za-z0-9][A-Za-z0-9._:-]*$/,
  "must start with a letter or digit and hold only letters, digits, '.', '_', ':' and '-'",
);

const runnerFields = {
  runner: runnerId.describe("The runner's own name, unique among its location's runners."),
  version: z.string().min(1).max(32).regex(/^[\x21-\x7e]+$/, "visible ASCII only")
    .describe("The runner's version, shown in the location's read."),
};

export const claimInput = z.strictObject({
  ...runnerFields,
  max: z.int().min(1).max(MAX_CLAIM_BATCH).default(100)
    .describe(`The most runs to claim (1 to ${MAX_CLAIM_BATCH}, default 100).`),
  wait_seconds: z.int().min(0).max(MAX_CLAIM_WAIT_SECONDS).default(MAX_CLAIM_WAIT_SECONDS)
    .describe(
      "How long to wait for due runs when none is due (0 to 25, default 25): the answer " +
        "comes as soon as some are, or empty after this long.",
    ),
});
export type ClaimInput = z.infer<typeof claimInput>;

/** One claimed run: what to send, and by when its result must be posted to count. */
export const claimedRun = z.object({
  run_id: z.string().describe(
    "Names the run in its result; valid for this location only. While the service cannot be " +
      "reached, a runner goes on running the probe on its grid and names those runs by this id " +
      'with the due time replaced and `.o` appended (docs/locations.md, "Outages").',
  ),
  due_at: z.string(),
  lease_until: z.string().describe(
    "Until when no other runner takes the run over; a result posted later is recorded if none " +
      "did, else reported as `expired`.",
  ),
  url: z.string(),
  method: z.string(),
  headers: z.record(z.string(), z.string()),
  body: z.unknown(),
  latency: z.int().nullable(),
  expect: probeExpect.nullable(),
  timeout_ms: z.int(),
  interval_seconds: z.int().describe(
    "The probe's interval: how often the runner goes on running it while the service cannot " +
      "be reached.",
  ),
});
export type ClaimedRun = z.infer<typeof claimedRun>;

export const claimAnswer = z.object({
  location: z.string(),
  runs: z.array(claimedRun),
});
export type ClaimAnswer = z.infer<typeof claimAnswer>;

/** A run's result as a runner posts it; the same fields a recorded result has. */
export const postedResult = z.strictObject({
  run_id: z.string().min(1).max(200),
  started_at: instant,
  duration_ms: z.int().min(0).max(3_600_000),
  outcome,
  http_status: z.int().min(100).max(599).nullable(),
  error: text(500).nullable(),
  address: text(100).nullable(),
  failed_checks: z.array(postedFailedCheck).max(100).nullable(),
});
export type PostedResult = z.infer<typeof postedResult>;

export const resultsPostInput = z.strictObject({
  ...runnerFields,
  results: z.array(postedResult).min(1).max(MAX_RESULTS_BATCH),
});
export type ResultsPostInput = z.infer<typeof resultsPostInput>;

/**
 * What became of each posted result: `recorded` now, `duplicate` (recorded before: posting
 * twice records once), or `expired` (its lease ran out and another runner took the run over,
 * the probe no longer runs there, or its `started_at` is more than 30 s ahead of the service's
 * clock, before the run's due time less its lease or before the probe was made; for a run made
 * while the service could not be reached, also when another claim's live lease holds the
 * probe's slot, or the due time is not on the probe's grid, in the future, older than a day or
 * before the probe was made): not recorded (docs/locations.md, "Results are dated by the
 * service's clock").
 */
export const RUN_STATUSES = ["recorded", "duplicate", "expired"] as const;

export const resultsPostAnswer = z.object({
  results: z.array(z.object({ run_id: z.string(), status: z.enum(RUN_STATUSES) })),
  recorded: z.int(),
  duplicate: z.int(),
  expired: z.int(),
});
export type ResultsPostAnswer = z.infer<typeof resultsPostAnswer>;

/**
 * What a run id names: `<claim>.<probe key>.<due ms>.<m>` (m: 1 when the run falls in a
 * maintenance window), and `….o` appended for a run a runner made while it could not reach the
 * service.
 */
export interface RunRef {
  claim: string;
  key: string;
  due: number;
  inMaintenance: boolean;
  /** Made while the service could not be reached, at a due time of the runner's own. */
  offline: boolean;
}

const RUN_ID = /^([0-9a-f-]{36})\.(\d{1,19})\.(\d{1,16})\.([01])(\.o)?$/;

export function parseRunId(id: string): RunRef | null {
  const m = RUN_ID.exec(id);
  // A due time outside the range of times was given to no run (and would not fit a timestamp).
  if (!m || !inInstantRange(Number(m[3]))) return null;
  return {
    claim: m[1],
    key: m[2],
    due: Number(m[3]),
    inMaintenance: m[4] === "1",
    offline: m[5] === ".o",
  };
}

/** The id of a run made during an outage: a claimed run's, at another due time, marked `.o`. */
export function offlineRunId(runId: string, due: number): string | null {
  const ref = parseRunId(runId);
  if (!ref) return null;
  return `${ref.claim}.${ref.key}.${due}.${ref.inMaintenance ? 1 : 0}.o`;
}
