/**
 * The service's side of the runner protocol: a remote location's runners claim due
 * runs of their location and post their results, over the API, never touching the database.
 *
 * - A claim takes up to `max` runs of the location due within the next second (the same
 *   statement the built-in runners use, `claimDue`), leased for `leaseFor(timeout)`, and records
 *   the claim (`location_claims`). Each run's id is `<claim>.<probe key>.<due ms>.<m>` (m: 1 when
 *   the run falls in a maintenance window). When none is due it waits, up to `wait_seconds`, on
 *   no database connection, until the one poll of all waiting claims finds a run due
 *   (`claim_waits.ts`, which also bounds the claims a location has open): an idle runner costs one
 *   request every 25 s.
 * - A post checks that every run id names a claim of the token's location (else 409, nothing
 *   recorded), then records the runs whose lease the claim still holds for that very due time
 *   (`recordRunsIn`, the built-in runners' statement), in one transaction. A run recorded before
 *   is `duplicate` (its result is found), any other `expired`: its lease ran out and another
 *   runner took it over, the probe stopped running there, or its result is dated where no run
 *   of it could be (`posted_runs.ts`: results are dated by the service's clock). So a run is
 *   recorded at most once, however often it is posted. Runs a runner made while it could not
 *   reach the service (ids marked `.o`) are recorded after those, by `offline_runs.ts`.
 * - Both say the runner was seen (`location_runners`); a runner counts among its location's
 *   runners once a claim has handed it runs (`runnerHanded`), not for a name it sends.
 *
 * @module
 */
import {
  type ClaimAnswer,
  type ClaimedRun,
  type ClaimInput,
  parseRunId,
  type ResultsPostAnswer,
  type ResultsPostInput,
  type RunRef,
} from "@probe/shared";
import { type Db, withBudget } from "../storage/database.ts";
import { DomainError } from "../domain/errors.ts";
import { runnerHanded as handed, runnerSeen as seen } from "../domain/locations.ts";
import { nextDue, offsetOf } from "../domain/schedule.ts";
import { claimDue, type Completed, extendLeases, recordRunsIn } from "./store.ts";
import {
  aheadOfClock,
  completedOf,
  holderOf,
  misdated,
  postedProbes,
  type PostedRuns,
  recordedSlots,
  type RunStatus,
} from "./posted_runs.ts";
import { recordOffline } from "./offline_runs.ts";
import { createScheduleSync } from "./schedule_sync.ts";
import { DEFAULT_LOCAL_LOCATION } from "@probe/shared";
import { leaseFor } from "./runner.ts";
import { createClaimWaits } from "./claim_waits.ts";

export interface RemoteRuns {
  /** Claims due runs of `location` for a runner; waits up to `wait_seconds` when none is. */
  claim(location: string, input: ClaimInput, signal?: AbortSignal): Promise<ClaimAnswer>;
  /** Records posted results of `location`'s runs. */
  post(location: string, input: ResultsPostInput): Promise<ResultsPostAnswer>;
}

export interface RemoteRunsOptions {
  db: Db;
  /** `PROBE_INTERVAL_SECONDS` and `PROBE_TIMEOUT_MS` (ms), for probes without their own. */
  intervalMs: number;
  timeoutMs: number;
  now?: () => number;
  /** How often the waiting claims' poll asks whether runs are due (`claim_waits.ts`). */
  pollMs?: number;
  /** How often schedule rows are added for new probes, at most (the runners' `syncSchedules`). */
  syncEveryMs?: number;
  /** A claim's lease for a run of timeout t: `leaseFor(t)` unless given (tests). */
  leaseMs?: (timeoutMs: number) => number;
  /** The built-in location's name (`RUNNER_LOCATION`), as messages name it. */
  localName?: string;
}

export function createRemoteRuns(
  {
    db,
    intervalMs,
    timeoutMs,
    now = Date.now,
    pollMs = 1000,
    syncEveryMs = 2000,
    leaseMs = leaseFor,
    localName = DEFAULT_LOCAL_LOCATION,
  }: RemoteRunsOptions,
): RemoteRuns {
  let syncedAt = -Infinity;
  const waits = createClaimWaits({ db, pollMs, now, beforePoll: () => sync() });
  const schedules = createScheduleSync(db, { intervalMs });
  const defaults = { intervalMs, timeoutMs };
  const verdicts = { localName, intervalMs };

  /** New probes get their rows even where no built-in runner runs (`RUNNER=off` everywhere). */
  async function sync() {
    if (now() - syncedAt < syncEveryMs) return;
    syncedAt = now();
    await schedules.sync(now());
  }

  async function claimOnce(location: string, input: ClaimInput): Promise<ClaimedRun[]> {
    const claim = crypto.randomUUID();
    const at = now();
    const leaseUntil = at + leaseMs(timeoutMs);
    const holder = holderOf(input.runner, claim);
    return await withBudget(db, "remoteRuns").transaction().execute(async (trx) => {
      await seen(trx, location, input);
      const claimed = await claimDue(trx, {
        location,
        now: at,
        horizon: at + 1000,
        leaseUntil,
        runner: holder,
        limit: input.max,
        defaults,
      });
      // Runs of disabled projects are not sent: they are given back to their next due time.
      const runnable = claimed.filter((c) => c.enabled);
      const skipped = claimed.filter((c) => !c.enabled);
      if (skipped.length > 0) {
        await recordRunsIn(
          trx,
          holder,
          skipped.map((c) => ({ key: c.key, due: c.due, nextDue: next(c, at), result: null })),
          location,
          verdicts,
        );
      }
      if (runnable.length === 0) return [];
      // Runs with a longer timeout than the service's get the lease it calls for.
      const longer = runnable.filter((c) => c.timeoutMs > timeoutMs);
      for (const c of longer) {
        await extendLeases(trx, holder, [c.key], at + leaseMs(c.timeoutMs), location);
      }
      await trx.insertInto("location_claims")
        .values({ id: claim, location, runner: input.runner, issued_at: new Date(at) })
        .execute();
      await handed(trx, location, input);
      return runnable.map((c) => ({
        run_id: `${claim}.${c.key}.${c.due}.${c.inMaintenance ? 1 : 0}`,
        due_at: new Date(c.due).toISOString(),
        lease_until: new Date(at + leaseMs(Math.max(c.timeoutMs, timeoutMs))).toISOString(),
        url: c.target.url,
        method: c.target.method,
        headers: c.target.headers,
        body: c.target.body,
        latency: c.target.latency,
        expect: c.target.expect,
        timeout_ms: c.timeoutMs,
        interval_seconds: Math.round(c.intervalMs / 1000),
      }));
    });
  }

  return {
    async claim(location, input, signal) {
      // Past the location's bound of open claims this throws (429), before any database work.
      const close = waits.open(location);
      try {
        await sync();
        const until = now() + input.wait_seconds * 1000;
        for (;;) {
          const runs = await waits.turn(location, () => claimOnce(location, input));
          // Took all it asked for: more may be due, for the next waiting claim.
          if (runs.length === input.max) waits.wakeNext(location);
          if (runs.length > 0 || now() >= until || signal?.aborted) return { location, runs };
          if (!await waits.wait(location, until, signal)) return { location, runs };
        }
      } finally {
        close();
      }
    },

    async post(location, input) {
      await seen(db, location, input);
      const refs = input.results.map((r) => parseRunId(r.run_id));
      await checkClaims(db, location, input, refs);
      const at = now();
      // Results dated ahead of the service's clock are expired here, before the database sees
      // them (`posted_runs.ts`).
      const runs = input.results.map((result, i) => ({ ref: refs[i]!, result, i }))
        .filter((r) => !aheadOfClock(r.result, at));
      const status: RunStatus[] = input.results.map(() => "expired");
      // Leased runs first, then those made during an outage, each in a transaction of its own.
      const leased = runs.filter((r) => !r.ref.offline);
      const offline = runs.filter((r) => r.ref.offline);
      const lease = (t: number | null) => leaseMs(Math.max(t ?? timeoutMs, timeoutMs));
      const who = { location, runner: input.runner, verdicts, at, lease };
      if (leased.length > 0) {
        const got = await recordLeased(db, { ...who, runs: leased });
        leased.forEach((r, j) => status[r.i] = got[j]);
      }
      if (offline.length > 0) {
        const got = await recordOffline(db, { ...who, runs: offline });
        offline.forEach((r, j) => status[r.i] = got[j]);
      }
      return answerOf(input, status);
    },
  };
}

/** The next due time of a claimed run given back unrun (its project is disabled). */
const next = (c: { key: string; due: number; intervalMs: number }, at: number) =>
  nextDue({
    due: c.due,
    now: at,
    offsetMs: offsetOf(c.key, c.intervalMs),
    intervalMs: c.intervalMs,
  });

/** 409 unless every run id names a claim made for `location`; nothing is recorded then. */
async function checkClaims(
  db: Db,
  location: string,
  input: ResultsPostInput,
  refs: (RunRef | null)[],
): Promise<void> {
  const claims = [...new Set(refs.flatMap((r) => (r ? [r.claim] : [])))];
  const found = claims.length === 0 ? [] : await db.selectFrom("location_claims")
    .select("id").where("id", "in", claims).where("location", "=", location).execute();
  const ours = new Set(found.map((f) => f.id));
  const foreign = input.results.flatMap((_, i) =>
    refs[i] && ours.has(refs[i]!.claim)
      ? []
      : [{ path: `results.${i}.run_id`, message: "not a run claimed for this location" }]
  );
  if (foreign.length > 0) {
    throw new DomainError("conflict", "Results for runs not claimed for this location", foreign);
  }
}

/** Records what can be of leased runs, in one transaction, and says what became of each. */
async function recordLeased(
  db: Db,
  { location, runner, runs, verdicts, at, lease }: PostedRuns,
): Promise<RunStatus[]> {
  const status: RunStatus[] = runs.map(() => "expired");
  await withBudget(db, "runner").transaction().execute(async (trx) => {
    const keys = runs.map((r) => r.ref.key);
    const probes = await postedProbes(trx, keys, { intervalMs: verdicts.intervalMs, lease });
    // One lease holder per claim; a post may carry several claims' runs.
    const byHolder = new Map<string, { index: number; ref: RunRef; completed: Completed }[]>();
    const firsts = new Set<string>();
    runs.forEach(({ ref, result: r }, index) => {
      // The same run twice in one post: the first counts, the others are duplicates.
      const run = `${ref.key}@${ref.due}`;
      if (firsts.has(run)) return void (status[index] = "duplicate");
      firsts.add(run);
      const probe = probes.get(ref.key);
      if (probe === undefined) return; // the probe is gone: expired
      if (misdated(r, ref, probe)) return;
      const holder = holderOf(runner, ref.claim);
      const list = byHolder.get(holder) ?? [];
      list.push({ index, ref, completed: completedOf(r, ref, probe.intervalMs, at) });
      byHolder.set(holder, list);
    });
    for (const [holder, held] of byHolder) {
      const { recorded } = await recordRunsIn(
        trx,
        holder,
        held.map((r) => r.completed),
        location,
        verdicts,
      );
      const missed = held.filter((r) => !recorded.has(r.ref.key));
      // Recorded by this claim before: a run another runner took over and recorded is expired.
      const before = await recordedSlots(trx, location, missed.map((r) => r.ref), holder);
      for (const r of held) {
        status[r.index] = recorded.has(r.ref.key)
          ? "recorded"
          : before.has(`${r.ref.key}@${r.ref.due}`)
          ? "duplicate"
          : "expired";
      }
    }
  });
  return status;
}

/** The answer to a post: each result's status, and their counts. */
function answerOf(input: ResultsPostInput, status: RunStatus[]): ResultsPostAnswer {
  const results = input.results.map((r, i) => ({ run_id: r.run_id, status: status[i] }));
  const count = (s: RunStatus) => status.filter((x) => x === s).length;
  return {
    results,
    recorded: count("recorded"),
    duplicate: count("duplicate"),
    expired: count("expired"),
  };
}
