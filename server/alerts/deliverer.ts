/**
 * Sends what the outbox holds: every instance runs one. Each round sends the reminders that are
 * due into the outbox, then claims due notifications (see `outbox.ts`) and sends each through the
 * notifier, at most `concurrency` at once, recording every attempt. A round follows at once while
 * there is more to send, else after `pollMs`; `wake()` starts one early (a transition recorded in
 * this process need not wait for the poll).
 *
 * @module
 */
import { hostname } from "node:os";
import type { Db } from "../db/database.ts";
import { errorFields, type Logger } from "../log.ts";
import type { DeliveryResult } from "../notify/delivery.ts";
import { remindDue } from "./incidents.ts";
import { type Claimed, claimNotifications, finishAttempt } from "./outbox.ts";

/** Sends one message to one target; never throws. */
export type Send = (
  target: string,
  message: { id: string; type: string; payload: unknown },
) => Promise<DeliveryResult>;

export interface DelivererOptions {
  db: Db;
  send: Send;
  log: Logger;
  /** Names this deliverer in claims and attempts; unique per process by default. */
  id?: string;
  now?: () => Date;
  pollMs?: number;
  batch?: number;
  leaseMs?: number;
}

export interface Deliverer {
  readonly id: string;
  start(): void;
  stop(): Promise<void>;
  /** Starts a round now (when not in one). */
  wake(): void;
  /** One round: reminders, then one claim and its sends; returns how many were sent. */
  deliverOnce(): Promise<number>;
}

export function createDeliverer(options: DelivererOptions): Deliverer {
  const { db, send, log } = options;
  const id = options.id ?? `${hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const now = options.now ?? (() => new Date());
  const pollMs = options.pollMs ?? 250;
  const batch = options.batch ?? 20;
  let stopped = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let round: Promise<unknown> | null = null;

  async function attempt(claimed: Claimed) {
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
    await finishAttempt(db, {
      deliverer: id,
      claimed,
      ok,
      error: result.error ?? (ok ? undefined : result.outcome),
      startedAt,
      durationMs: performance.now() - started,
      now: now(),
    });
    const fields = { id: claimed.id, target: claimed.target, type: claimed.type };
    if (ok) log.info("notification delivered", { ...fields, attempt: claimed.attempt });
    else {log.warn("notification not delivered", {
        ...fields,
        attempt: claimed.attempt,
        error: result.error,
      });}
  }

  async function deliverOnce(): Promise<number> {
    await remindDue(db, now());
    const claimed = await claimNotifications(db, {
      deliverer: id,
      now: now(),
      limit: batch,
      leaseMs: options.leaseMs,
    });
    await Promise.all(claimed.map(attempt));
    return claimed.length;
  }

  function schedule(ms: number) {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(tick, ms);
  }

  function tick() {
    if (round || stopped) return;
    let more = false;
    round = deliverOnce()
      .then((sent) => more = sent >= batch)
      .catch((error) => log.error("delivering notifications failed", errorFields(error)))
      .finally(() => {
        round = null;
        schedule(more ? 0 : pollMs);
      });
  }

  return {
    id,
    deliverOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
    wake() {
      if (!stopped && !round) schedule(0);
    },
  };
}
