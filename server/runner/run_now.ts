/**
 * Running a probe once, now, on request (`POST …/probes/{probeId}/run`): with the runner's
 * executor (the same network policy, timeouts and assertions), recorded with `trigger: manual`
 * like any run: it counts toward the probe's state and uptime, and may open or resolve its
 * incident. At most one manual run per probe is in flight, across instances: the claim is the
 * schedule row's `manual_run_at`, taken with a conditional update (a second request gets 409),
 * and let go when the run is recorded, or after `leaseMs` if the process died meanwhile.
 *
 * A manual run is made from the built-in location (where the service is), on its schedule row:
 * a probe that does not run from there is refused (409): its locations' runners make its runs.
 *
 * @module
 */
import type { ProbeExpect, ProbeRef, ProbeResult } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../storage/database.ts";
import { DomainError, notFound } from "../domain/errors.ts";
import type { ProbeTarget, RunResult } from "./execute.ts";
import type { OutboundOptions } from "../base/outbound/request.ts";
import { decideVerdicts } from "../alerting/verdicts.ts";
import { settleSchedule } from "../alerting/states.ts";
import { insertRuns, resultFields, type Verdicts } from "./store.ts";
import { effectiveLocationsSql, LOCAL } from "../domain/locations.ts";
import { DEFAULT_LOCAL_LOCATION } from "@probe/shared";
import { HEARTBEAT_SCHEME } from "../storage/heartbeat_url.ts";

/** Runs one probe, telling `beforeRequest` (if given) before each request it sends. */
export type Executor = (
  target: ProbeTarget,
  hooks?: Pick<OutboundOptions, "beforeRequest">,
) => Promise<RunResult>;

export interface RunNow {
  /**
   * Runs the probe now. `chargeRequests` is told of each request sent past the first (redirect
   * hops, the retry after a network failure): the first is the caller's own call, the others
   * are charged to its key, so that run-now cannot multiply a key's rate into the target.
   */
  run(ref: ProbeRef, options?: { chargeRequests?: (count: number) => void }): Promise<ProbeResult>;
}

export function createRunNow(
  {
    db,
    execute,
    runner = "manual",
    leaseMs = 120_000,
    now = () => new Date(),
    location = DEFAULT_LOCAL_LOCATION,
    intervalMs = 60_000,
  }: {
    db: Db;
    /** The service-wide interval (ms), for deciding the probe's state (stale locations). */
    intervalMs?: number;
    /** The built-in location's name (`RUNNER_LOCATION`), shown on the runs' results. */
    location?: string;
    /** Runs one probe: the runner's executor. */
    execute: Executor;
    /** Recorded as the result's runner. */
    runner?: string;
    /** How long a claim holds when its process never lets it go. */
    leaseMs?: number;
    now?: () => Date;
  },
): RunNow {
  return {
    async run(ref, { chargeRequests } = {}) {
      const { key, at, target, inMaintenance } = await claim(db, ref, leaseMs, now);
      let sent = 0;
      const beforeRequest = chargeRequests && (() => {
        if (sent++ > 0) chargeRequests(1);
      });
      let result: RunResult;
      let recorded: boolean;
      try {
        result = await execute(target, { beforeRequest });
        // Recording lets the claim go in its transaction; when it fails, so must the claim,
        // or the probe answers 409 until the claim runs out.
        recorded = await record(db, runner, key, result, inMaintenance, {
          localName: location,
          intervalMs,
        });
      } catch (error) {
        await release(db, key, at);
        throw error;
      }
      if (!recorded) throw notFound("Probe");
      return answerOf(result, inMaintenance, location);
    },
  };
}

/** The probe to run, with its project's status. */
function readProbe(db: Db, ref: ProbeRef) {
  return db.selectFrom("probes")
    .innerJoin("projects", "projects.name", "probes.project")
    .select([
      "probes.key",
      "probes.url",
      "probes.method",
      "probes.headers",
      "probes.body",
      "probes.latency",
      "probes.expect",
      "probes.timeout_ms",
      "projects.status",
      sql<boolean>`${LOCAL} = any(${effectiveLocationsSql("probes", "projects")})`.as("here"),
    ])
    .where("probes.project", "=", ref.project).where("probes.probe_id", "=", ref.probeId)
    .where("probes.url", "not like", `${HEARTBEAT_SCHEME}%`)
    .executeTakeFirst();
}

type ProbeRow = NonNullable<Awaited<ReturnType<typeof readProbe>>>;

/** What the executor is given of a probe. */
function targetOf(probe: ProbeRow): ProbeTarget {
  return {
    url: probe.url,
    method: probe.method,
    headers: probe.headers,
    body: probe.body,
    latency: probe.latency,
    expect: probe.expect as ProbeExpect | null,
    // The probe's own timeout; the executor's (`PROBE_TIMEOUT_MS`) when it has none.
    ...(probe.timeout_ms !== null && { timeoutMs: probe.timeout_ms }),
  };
}

/**
 * Takes the probe's manual-run claim at `at` (its schedule row made if need be): 404 for a probe
 * gone meanwhile, 409 while another claim younger than `leaseMs` holds.
 */
async function takeClaim(db: Db, key: string, at: Date, leaseMs: number): Promise<void> {
  // A probe the runner has not scheduled yet gets its row here (due at once, as new ones are).
  await sql`
    insert into probe_schedule (probe_key, location, next_due_at)
    select key, ${LOCAL}, ${at.toISOString()} from probes where key = ${key}
    on conflict (probe_key, location) do nothing`.execute(db);
  const taken = await sql`
    update probe_schedule set manual_run_at = ${at.toISOString()}
    where probe_key = ${key} and location = ${LOCAL}
      and (manual_run_at is null or manual_run_at < ${new Date(at.getTime() - leaseMs)})
    returning probe_key`.execute(db);
  if (taken.rows.length === 0) {
    const still = await db.selectFrom("probes").select("key").where("key", "=", key)
      .executeTakeFirst();
    if (!still) throw notFound("Probe");
    throw new DomainError("conflict", "A manual run of this probe is already in flight");
  }
}

/** Whether one of the project's maintenance windows is open at `at`. */
async function inMaintenanceAt(db: Db, project: string, at: Date): Promise<boolean> {
  const { rows: [window] } = await sql<{ in_maintenance: boolean }>`
    select exists (
      select 1 from maintenance_windows
      where project = ${project} and starts_at <= ${at.toISOString()}
        and ends_at > ${at.toISOString()}
    ) as in_maintenance`.execute(db);
  return window.in_maintenance;
}

/** The probe, its claim taken, and what its run needs to know. */
async function claim(db: Db, ref: ProbeRef, leaseMs: number, now: () => Date) {
  const probe = await readProbe(db, ref);
  if (!probe) throw notFound("Probe");
  if (probe.status !== "enabled") {
    throw new DomainError("conflict", "The probe's project is disabled");
  }
  if (!probe.here) {
    throw new DomainError(
      "conflict",
      "The probe does not run from the built-in location, where manual runs are made",
    );
  }
  const at = now();
  const key = String(probe.key);
  await takeClaim(db, key, at, leaseMs);
  const inMaintenance = await inMaintenanceAt(db, ref.project, at);
  return { key, at, target: targetOf(probe), inMaintenance };
}

/** Records the run and lets the claim go, in one transaction; false when the probe is gone. */
function record(
  db: Db,
  runner: string,
  key: string,
  result: RunResult,
  inMaintenance: boolean,
  verdicts: Verdicts,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { settled, changes } = await settleSchedule(trx, [{
      key,
      dueAt: null,
      nextDueAt: null,
      run: result,
      counted: !inMaintenance,
    }], { manual: true });
    if (!settled.has(key)) return false;
    await insertRuns(trx, runner, [{
      key,
      due: result.startedAt.getTime(),
      result,
      trigger: "manual",
      inMaintenance,
    }]);
    await decideVerdicts(trx, changes.map((c) => c.key), {
      ...verdicts,
      now: new Date(),
      triggers: new Map(changes.map((c) => [c.key, c])),
    });
    return true;
  });
}

/** Lets this claim go (and no later one); a failure leaves it to run out after `leaseMs`. */
async function release(db: Db, key: string, at: Date) {
  try {
    await sql`
      update probe_schedule set manual_run_at = null
      where probe_key = ${key} and location = ${LOCAL}
        and manual_run_at = ${at.toISOString()}`.execute(db);
  } catch {
    // The database failed the run's recording too, most likely: the error that says so is
    // the one the caller gets.
  }
}

/** The run's answer. */
function answerOf(result: RunResult, inMaintenance: boolean, location: string): ProbeResult {
  return {
    ...resultFields(result),
    location,
    trigger: "manual",
    in_maintenance: inMaintenance,
  };
}
