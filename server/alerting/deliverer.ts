/**
 * Sends what the outbox holds: every instance runs one. Each target has a slot of its own, and
 * all share `concurrency` more: whenever a slot frees (or every `pollMs`, for retries whose time
 * has come), it claims due notifications (see `outbox.ts`) for the free slots and sends each
 * through the notifier, recording every attempt. `wake()` claims at once (a transition recorded
 * in this process need not wait for the poll). Every `dueEveryMs` it first puts the reminders,
 * escalation steps and ends of flapping that are due into the outbox.
 *
 * One target cannot hold the others up: a target's first send in flight is on its own slot, so
 * however many targets hang, one that answers is sent to at once (their sends wait on their own
 * slots and on the shared ones they took). A target may hold at most `perTarget` slots, its own
 * included, and a target that fails is held to fewer: its own slot only after a failure, and after
 * `breakerFailures` failures in a row none for a pause (5 s, doubling each time the trial send
 * that follows it fails, at most 5 minutes), then one trial send. A delivery puts it back to its
 * full share. Its notifications meanwhile stay in the outbox, deferred to the pause's end (so
 * that claims do not read through them, and other instances wait too), neither dropped nor
 * charged an attempt: they go out once the target answers again. The shares and the count of
 * failures are the process's own; each instance learns a failing target by itself.
 *
 * @module
 */
import { hostname } from "node:os";
import type { Db } from "../storage/database.ts";
import { errorFields, type Logger } from "../base/log.ts";
import { type Clock, systemClock } from "../base/clock.ts";
import { createLoop } from "../base/loop.ts";
import type { DeliveryResult } from "./notify/delivery.ts";
import { remindDue } from "./incidents.ts";
import { escalateDue } from "./escalation.ts";
import { settleFlapping } from "./flapping.ts";
import {
  type Claimed,
  claimNotifications,
  deferTarget,
  finishAttempts,
  type Finished,
} from "./outbox/outbox.ts";

/** Sends one message to one target; never throws. */
export type Send = (
  target: string,
  message: { id: string; type: string; payload: unknown },
) => Promise<DeliveryResult>;

/**
 * How often notifications whose next attempt has come are claimed (ms): a retry waits 5 s at
 * least, and what is queued or freed wakes the deliverer at once, so the poll need not be finer.
 */
export const POLL_MS = 1_000;

/**
 * How often reminders, escalation steps and the end of flapping are looked for (ms). Each is set
 * in whole minutes, so a few seconds is precise enough; an idle service that looked four times a
 * second allocated enough, in the database's thread, for V8 never to give back the heap its start
 * left there (docs/performance.md, "Memory").
 */
export const DUE_EVERY_MS = 5_000;

/**
 * Shared slots: sends in flight beyond each target's first (`NOTIFY_CONCURRENCY`): enough for
 * four targets at their full share at once.
 */
export const DEFAULT_CONCURRENCY = 64;
/**
 * Sends in flight at once to one target (`NOTIFY_TARGET_CONCURRENCY`). Receivers are webhooks and
 * vendor APIs built for bursts; at 4, a burst of a thousand alerts waited on round trips (a slot
 * frees, a claim, a send) for tens of seconds. One that cannot keep up answers 429 or fails: its
 * Retry-After is honoured, and failures cut it to one slot, then pause it (the breaker).
 */
export const DEFAULT_PER_TARGET = 16;
/**
 * Targets sending on a slot of their own at once, at most: what a deliverer holds (connections)
 * stays bounded however many targets there are; past it, a target's first send waits for a
 * shared slot.
 */
export const OWN_SLOTS = 1_000;
/** Failures in a row after which a target is paused (`NOTIFY_BREAKER_FAILURES`). */
export const DEFAULT_BREAKER_FAILURES = 3;
/** A paused target's first pause; each failed trial after a pause doubles the next. */
export const BREAKER_PAUSE_MS = 5_000;
/** The longest pause: a target that came back is found within this. */
export const BREAKER_MAX_PAUSE_MS = 300_000;

export interface DelivererOptions {
  db: Db;
  send: Send;
  log: Logger;
  /** Names this deliverer in claims and attempts; unique per process by default. */
  id?: string;
  /** The poll's timer and the time claims and attempts are at; the system's by default. */
  clock?: Clock;
  /**
   * How often notifications whose next attempt has come are claimed (ms); {@link POLL_MS} by
   * default.
   */
  pollMs?: number;
  /**
   * How often reminders, escalation steps and the end of flapping are looked for (ms);
   * {@link DUE_EVERY_MS} by default.
   */
  dueEveryMs?: number;
  /** Shared slots: sends beyond each target's first; {@link DEFAULT_CONCURRENCY} by default. */
  concurrency?: number;
  /** Sends in flight at once to one target, its own slot included; {@link DEFAULT_PER_TARGET}. */
  perTarget?: number;
  /** Failures in a row that pause a target; {@link DEFAULT_BREAKER_FAILURES} by default. */
  breakerFailures?: number;
  leaseMs?: number;
}

export interface Deliverer {
  readonly id: string;
  start(): void;
  stop(): Promise<void>;
  /** Claims for the free slots now. */
  wake(): void;
  /**
   * Reminders, then one claim for the free slots, and its sends awaited; returns how many were
   * sent (for tests, which drive a deliverer that is not started).
   */
  deliverOnce(): Promise<number>;
}

/** How a target has been answering, kept while it fails (a delivery forgets it). */
interface TargetHealth {
  /** Failed attempts in a row. */
  failures: number;
  /** Pauses in a row (each twice as long as the one before). */
  pauses: number;
  /** Nothing is sent to it before this time (ms), once the failures reach the threshold. */
  pausedUntil: number;
}

export function createDeliverer(options: DelivererOptions): Deliverer {
  const { db, send, log } = options;
  const id = options.id ?? `${hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const clock = options.clock ?? systemClock;
  const now = () => new Date(clock.now());
  const pollMs = options.pollMs ?? POLL_MS;
  const dueEveryMs = options.dueEveryMs ?? DUE_EVERY_MS;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const perTarget = Math.min(options.perTarget ?? DEFAULT_PER_TARGET, concurrency);
  const breakerFailures = options.breakerFailures ?? DEFAULT_BREAKER_FAILURES;
  /** Sends in flight (their slots), all targets; `inFlight` counts them per target. */
  const sending = new Set<object>();
  /** Attempts not yet recorded, their sends in flight or done. */
  const unfinished = new Set<Promise<void>>();
  const { inFlight, rooms, learn } = targetBreaker({ perTarget, breakerFailures, now, log });
  const record = attemptRecorder(db, id, now);
  const attempt = (claimed: Claimed, onAnswer: () => void) =>
    attemptDelivery(claimed, { db, send, log, now, learn, record, onAnswer });

  /** Starts the send of a claimed notification in a slot; the slot frees when its answer is in. */
  function begin(claimed: Claimed): Promise<void> {
    inFlight.set(claimed.target, (inFlight.get(claimed.target) ?? 0) + 1);
    const slot = {};
    let freed = false;
    // The slot frees when the answer is in: the record is written meanwhile (the notification
    // stays claimed until it is, so no claim takes it again), not on the slot's time.
    const free = () => {
      if (freed) return;
      freed = true;
      sending.delete(slot);
      const left = (inFlight.get(claimed.target) ?? 1) - 1;
      if (left > 0) inFlight.set(claimed.target, left);
      else inFlight.delete(claimed.target);
      claim();
    };
    const done: Promise<void> = attempt(claimed, free)
      .catch((error) => log.error("recording a notification attempt failed", errorFields(error)))
      .finally(() => {
        unfinished.delete(done);
        free();
      });
    sending.add(slot);
    unfinished.add(done);
    return done;
  }

  /**
   * Claims for the free slots (the shared ones, and the own slot of each target with nothing in
   * flight), within each target's room, and starts the sends.
   */
  async function fill(): Promise<Promise<void>[]> {
    // Each target's first send is on its own slot (while there are some), the rest on shared ones.
    const ownFree = OWN_SLOTS - inFlight.size;
    const free = Math.max(0, concurrency - (sending.size - Math.min(inFlight.size, OWN_SLOTS)));
    const at = now();
    const claimed = await claimNotifications(db, {
      deliverer: id,
      now: at,
      limit: free,
      leaseMs: options.leaseMs,
      perTarget: Math.min(perTarget, 1 + free),
      rooms: rooms(at.getTime(), free),
      own: ownFree > 0 ? { busy: [...inFlight.keys()], free: ownFree } : undefined,
    });
    return claimed.map(begin);
  }

  /**
   * Claims, one claim at a time so that rooms hold: when woken (a slot freed, a notification
   * written), every `pollMs` (for retries whose time has come), and again at once while a claim
   * starts sends (it may have left room: a target's share reached).
   */
  const claims = createLoop({
    name: "delivering notifications",
    clock,
    log,
    everyMs: pollMs,
    task: async () => (await fill()).length > 0,
  });
  const claim = () => claims.wake();

  /**
   * What falls due by the minute (reminders, escalation steps, the end of flapping: each is set
   * in whole minutes) into the outbox, every `dueEveryMs`; what it queues is claimed at once.
   */
  const due = createLoop({
    name: "the outbox's reminders, escalation steps and flapping",
    clock,
    log,
    everyMs: dueEveryMs,
    firstMs: 0,
    task: () =>
      remindDue(db, now())
        .catch((error) => log.error("sending reminders failed", errorFields(error)))
        .then(() => escalateDue(db, now()))
        .catch((error) => log.error("sending escalation steps failed", errorFields(error)))
        .then(() => settleFlapping(db, now()))
        .catch((error) => log.error("settling flapping probes failed", errorFields(error)))
        .then(() => claim()),
  });

  return {
    id,
    async deliverOnce() {
      await remindDue(db, now());
      await escalateDue(db, now());
      await settleFlapping(db, now());
      const started = await fill();
      await Promise.all(started);
      return started.length;
    },
    start() {
      if (!claims.start()) return;
      due.start();
    },
    async stop() {
      await Promise.all([due.stop(), claims.stop()]);
      await Promise.all(unfinished);
    },
    wake() {
      claim();
    },
  };
}

/**
 * Each target's share of the slots and its breaker: a target failing `breakerFailures` times in
 * a row gets one slot, then is paused (twice as long each time, up to `BREAKER_MAX_PAUSE_MS`); a
 * delivery forgets it all. `inFlight` counts each target's sends under way: the first is on the
 * target's own slot, the others on shared ones.
 */
function targetBreaker(
  { perTarget, breakerFailures, now, log }: {
    perTarget: number;
    breakerFailures: number;
    now: () => Date;
    log: Logger;
  },
) {
  const inFlight = new Map<string, number>();
  const health = new Map<string, TargetHealth>();

  /** How many more sends `target` may start at `at`, with `free` shared slots free. */
  function room(target: string, at: number, free: number): number {
    const h = health.get(target);
    const share = !h ? perTarget : h.failures < breakerFailures ? 1 : at < h.pausedUntil ? 0 : 1;
    const sends = inFlight.get(target) ?? 0;
    // Its own slot when it has nothing in flight, and shared ones up to its share.
    if (sends === 0) return Math.min(share, 1 + free);
    return Math.max(0, Math.min(share - sends, free));
  }

  /** Each target whose room is not the default: the claim's `rooms`. */
  function rooms(at: number, free: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const target of new Set([...inFlight.keys(), ...health.keys()])) {
      out[target] = room(target, at, free);
    }
    return out;
  }

  /** Learns from an attempt; returns when a pause starts, the time it ends. */
  function learn(target: string, ok: boolean): number | null {
    const h = health.get(target);
    if (ok) {
      if (h?.pauses) log.info("notification target answers again", { target });
      health.delete(target);
      return null;
    }
    const at = now().getTime();
    const next = h ?? { failures: 0, pauses: 0, pausedUntil: 0 };
    health.set(target, next);
    next.failures++;
    // Sends that were in flight together fail together: one pause for them, not one each.
    if (next.failures < breakerFailures || at < next.pausedUntil) return null;
    next.pauses++;
    const pause = Math.min(
      BREAKER_PAUSE_MS * 2 ** Math.min(next.pauses - 1, 20),
      BREAKER_MAX_PAUSE_MS,
    );
    next.pausedUntil = at + pause;
    if (next.pauses === 1) {
      log.warn("notification target paused after failures in a row", {
        target,
        failures: next.failures,
        pause_ms: pause,
      });
    }
    return next.pausedUntil;
  }

  return { inFlight, rooms, learn };
}

/** Attempts recorded in one statement at most. */
const RECORD_BATCH = 500;

/**
 * Records attempts as they end, those that end while a record is being written together in the
 * next one (a group commit): one statement while idle, and no round trip per attempt when many
 * are sent at once. Each attempt's promise settles once it is recorded.
 */
function attemptRecorder(db: Db, deliverer: string, now: () => Date) {
  let queue: { finished: Finished; settle: (error?: unknown) => void }[] = [];
  let writing = false;
  function write() {
    if (writing || queue.length === 0) return;
    writing = true;
    const batch = queue.slice(0, RECORD_BATCH);
    queue = queue.slice(RECORD_BATCH);
    finishAttempts(db, { deliverer, now: now(), finished: batch.map((b) => b.finished) })
      .then(
        () => batch.forEach((b) => b.settle()),
        (error) => batch.forEach((b) => b.settle(error)),
      )
      .finally(() => {
        writing = false;
        write();
      });
  }
  return (finished: Finished) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ finished, settle: (error) => error === undefined ? resolve() : reject(error) });
      write();
    });
}

/** One attempt at a claimed notification: sent, recorded, the target paused when it must be. */
async function attemptDelivery(
  claimed: Claimed,
  { db, send, log, now, learn, record, onAnswer }: {
    db: DelivererOptions["db"];
    send: DelivererOptions["send"];
    log: Logger;
    now: () => Date;
    learn: (target: string, ok: boolean) => number | null;
    record: (finished: Finished) => Promise<void>;
    /** Called once the send has ended, before its record is written. */
    onAnswer: () => void;
  },
): Promise<void> {
  const startedAt = now();
  const started = performance.now();
  let result: DeliveryResult;
  try {
    result = await send(claimed.target, {
      id: claimed.id,
      type: claimed.type,
      payload: claimed.payload,
    });
  } catch (error) {
    log.error("sending a notification failed", { id: claimed.id, ...errorFields(error) });
    result = { outcome: "failed", attempts: 1, error: "internal error" };
  }
  const ok = result.outcome === "delivered";
  const pausedUntil = learn(claimed.target, ok);
  const durationMs = performance.now() - started;
  onAnswer();
  await record({
    claimed,
    ok,
    error: result.error ?? (ok ? undefined : result.outcome),
    final: result.final,
    retryAfterMs: result.retryAfterMs,
    startedAt,
    durationMs,
  });
  if (pausedUntil !== null) {
    await deferTarget(db, { target: claimed.target, until: new Date(pausedUntil), now: now() });
  }
  const fields = { id: claimed.id, target: claimed.target, type: claimed.type };
  if (ok) log.info("notification delivered", { ...fields, attempt: claimed.attempt });
  else {log.warn("notification not delivered", {
      ...fields,
      attempt: claimed.attempt,
      error: result.error,
    });}
}
