/**
 * The outbox every notification goes through. A notification is written in the transaction that
 * decides it (a state change, a reminder), one row per target, with an id that never changes
 * (`msg_…`: the `webhook-id` receivers drop repeats by). Deliverers on every instance claim due
 * rows with `FOR UPDATE SKIP LOCKED` and a lease; a deliverer that dies between claim and send
 * leaves the lease to run out, and another sends the same notification, with the same id, later.
 * Delivery is therefore at least once; nothing written here is ever dropped: a notification ends
 * `delivered`, or `failed` after {@link MAX_ATTEMPTS} attempts spread over hours, or at once when
 * the receiver refused the request itself (its provider's verdict: `server/alerting/notify/provider.ts`).
 *
 * @module
 */
import type { AlertEvent } from "@probe/shared";
import { sql } from "kysely";
import type { Db } from "../../storage/database.ts";
import { json } from "../../storage/json.ts";

/**
 * Attempts before a notification is given up as `failed`: with the back-off below, the last is
 * about 11.4 hours after the first (5 s, doubling to an hour, then hourly), so a receiver down
 * overnight still gets it.
 */
export const MAX_ATTEMPTS = 20;
/** How long a claim holds before another deliverer may take the notification over. */
export const CLAIM_LEASE_MS = 60_000;

/** The pause before attempt `attempt + 1`: 5 s, doubling, at most an hour. */
export function backoffMs(attempt: number): number {
  return Math.min(5_000 * 2 ** Math.max(0, attempt - 1), 3_600_000);
}

/** An event to send to each of `targets`. */
export interface Outgoing {
  event: AlertEvent;
  targets: readonly string[];
  incidentId: string | null;
}

/** A new notification id, in the Standard Webhooks style. */
export const newMessageId = () => `msg_${crypto.randomUUID().replaceAll("-", "")}`;

/** Writes the notifications of `items` (call inside the deciding transaction). */
export function enqueue(trx: Db, items: readonly Outgoing[]): Promise<number> {
  return enqueueMessages(
    trx,
    items.flatMap(({ event, targets, incidentId }) =>
      [...new Set(targets)].map((target) => ({
        target,
        type: event.type,
        payload: event,
        incidentId,
      }))
    ),
  );
}

/** One message to one target: an alert event, or another kind (an I'm alive report). */
export interface Message {
  target: string;
  type: string;
  payload: unknown;
  incidentId?: string | null;
  /** A stable id of the caller's choosing; a new one by default. */
  id?: string;
}

/**
 * The channel a write to the outbox notifies (`NOTIFY`, sent when its transaction commits, to
 * every instance listening): deliverers claim at once instead of at their next poll.
 */
export const NOTIFICATIONS_CHANNEL = "notifications_due";

const writeListeners = new Set<() => void>();

/**
 * Calls `listener` each time this process writes to the outbox, from inside the writing
 * transaction (not yet committed): for the embedded database, whose one connection makes a claim
 * wait for that transaction to end. Returns the function that stops it.
 */
export function onOutboxWrite(listener: () => void): () => void {
  writeListeners.add(listener);
  return () => writeListeners.delete(listener);
}

/** Writes messages to the outbox; an id already there is left as it is (written once). */
export async function enqueueMessages(trx: Db, messages: readonly Message[]): Promise<number> {
  if (messages.length === 0) return 0;
  const rows = messages.map((m) => ({
    id: m.id ?? newMessageId(),
    event: m.type,
    target: m.target,
    incident_id: m.incidentId ?? null,
    payload: m.payload,
  }));
  // The notify in the same statement: no round trip more for the wake-up.
  const { rows: [inserted] } = await sql<{ n: number }>`
    with inserted as (
      insert into notifications (id, event, target, incident_id, payload)
      select x.id, x.event, x.target, x.incident_id, x.payload
      from json_to_recordset(${json(rows)})
        as x(id text, event text, target text, incident_id bigint, payload json)
      on conflict (id) do nothing
      returning 1
    )
    select count(*)::int as n, pg_notify(${NOTIFICATIONS_CHANNEL}, '') is null as notified
    from inserted`.execute(trx);
  for (const listener of writeListeners) listener();
  return inserted.n;
}

/** A notification claimed for sending. */
export interface Claimed {
  id: string;
  target: string;
  /** The message's type: an alert event's (`probe.down`, …) or `iam_alive.report`. */
  type: string;
  payload: unknown;
  /** This attempt's number, from 1. */
  attempt: number;
}

/**
 * Claims up to `limit` due notifications for `deliverer`, until `now + leaseMs`, oldest first,
 * at most `perTarget` of any one target, or what `rooms` gives for that target (0: none; a
 * deliverer passes what each target has left of its share). A target's due notifications that
 * do not fit stay due, for the next claim or another instance: one target's backlog cannot fill
 * a claim and keep the others waiting.
 *
 * With `own`, up to `own.free` targets that are not `own.busy` (have no send in flight) each have
 * their oldest due notification claimed on a slot of the target's own, beyond `limit`, which then
 * bounds only the rest (the shared slots): targets that hang cannot keep one that answers from
 * being sent to.
 */
export async function claimNotifications(
  db: Db,
  { deliverer, now, limit, leaseMs = CLAIM_LEASE_MS, perTarget = limit, rooms = {}, own }: {
    deliverer: string;
    now: Date;
    limit: number;
    leaseMs?: number;
    perTarget?: number;
    rooms?: Readonly<Record<string, number>>;
    own?: { busy: readonly string[]; free: number };
  },
): Promise<Claimed[]> {
  const at = now.toISOString();
  const room = sql<number>`coalesce((${json(rooms)} ->> target)::int, ${perTarget}::int)`;
  const busy = json(Object.fromEntries((own?.busy ?? []).map((target) => [target, 1])));
  const onOwn = own ? sql<boolean>`rank = 1 and (${busy} ->> target) is null` : sql`false`;
  // Rows locked but not taken (over a target's share) are released when the statement ends.
  const { rows } = await sql<
    { id: string; target: string; event: string; payload: unknown; attempts: number }
  >`
    with candidates as (
      select id, target, next_attempt_at, ${room} as room from notifications
      where status = 'pending' and next_attempt_at <= ${at}
        and (claimed_until is null or claimed_until < ${at})
        and ${room} > 0
      order by next_attempt_at, id
      limit ${Math.max(limit * 2, limit + 10)}
      for update skip locked
    ),
    ranked as (
      select id, target, next_attempt_at, room,
        row_number() over (partition by target order by next_attempt_at, id) as rank
      from candidates
    ),
    fitting as (
      select id, next_attempt_at, ${onOwn} as own from ranked where rank <= room
    ),
    due as (
      (select id from fitting where own order by next_attempt_at, id limit ${own?.free ?? 0})
      union all
      (select id from fitting where not own order by next_attempt_at, id limit ${limit})
    )
    update notifications n
    set claimed_by = ${deliverer},
        claimed_until = ${new Date(now.getTime() + leaseMs).toISOString()},
        attempts = n.attempts + 1
    from due where n.id = due.id
    returning n.id, n.target, n.event, n.payload, n.attempts`.execute(db);
  return rows.map((r) => ({
    id: r.id,
    target: r.target,
    type: r.event,
    payload: r.payload,
    attempt: r.attempts,
  }));
}

/** How one attempt ended, as `finishAttempts` records it. */
export interface Finished {
  claimed: Claimed;
  ok: boolean;
  error?: string;
  /** The receiver refused the request itself: give up at once. */
  final?: boolean;
  /** The wait the receiver asked for (`Retry-After`), in ms. */
  retryAfterMs?: number;
  startedAt: Date;
  durationMs: number;
}

/**
 * Records how an attempt ended: delivered, or failed and due again after its back-off (or the
 * wait the receiver asked for, `retryAfterMs`, when longer), or given up: after the last attempt,
 * or at once when the failure is `final` (the receiver refused the request itself). Only the
 * deliverer that still holds the claim records; a claim taken over meanwhile is left to its new
 * holder.
 */
export function finishAttempt(
  db: Db,
  { deliverer, now, ...finished }: Finished & { deliverer: string; now: Date },
): Promise<void> {
  return finishAttempts(db, { deliverer, now, finished: [finished] });
}

/**
 * Records several attempts as `finishAttempt` does each, in one statement (the notification's
 * row and its attempt's, together or not at all): a deliverer sending many at once records them
 * in one round trip instead of a transaction each.
 */
export async function finishAttempts(
  db: Db,
  { deliverer, now, finished }: { deliverer: string; now: Date; finished: readonly Finished[] },
): Promise<void> {
  if (finished.length === 0) return;
  const rows = finished.map(({ claimed, ok, error, final = false, retryAfterMs = 0, ...f }) => {
    const last = !ok && (final || claimed.attempt >= MAX_ATTEMPTS);
    const wait = Math.max(backoffMs(claimed.attempt), retryAfterMs);
    return {
      id: claimed.id,
      status: ok ? "delivered" : last ? "failed" : "pending",
      next_at: (ok || last ? now : new Date(now.getTime() + wait)).toISOString(),
      error: ok ? null : error ?? "failed",
      attempted_at: f.startedAt.toISOString(),
      duration_ms: Math.round(f.durationMs),
    };
  });
  await sql`
    with x as (
      select * from json_to_recordset(${json(rows)})
        as x(id text, status text, next_at timestamptz, error text, attempted_at timestamptz,
             duration_ms integer)
    ), updated as (
      update notifications n
      set status = x.status,
          delivered_at = case when x.status = 'delivered' then ${now.toISOString()}::timestamptz end,
          next_attempt_at = x.next_at, claimed_by = null, claimed_until = null,
          last_error = x.error
      from x
      where n.id = x.id and n.claimed_by = ${deliverer} and n.status = 'pending'
      returning n.id
    )
    insert into notification_attempts
      (notification_id, attempted_at, outcome, error, duration_ms, instance_id)
    select x.id, x.attempted_at, case when x.error is null then 'delivered' else 'failed' end,
      x.error, x.duration_ms, ${deliverer}
    from x join updated u on u.id = x.id
    order by x.attempted_at, x.id`.execute(db);
}

/**
 * Defers a paused target's due notifications to `until` (none is given up or charged an
 * attempt): claims then pass over them in the index instead of reading them and leaving them,
 * and every instance waits with them. Those claimed and in flight are left to their sender.
 * Returns how many were deferred.
 */
export async function deferTarget(
  db: Db,
  { target, until, now }: { target: string; until: Date; now: Date },
): Promise<number> {
  const result = await db.updateTable("notifications")
    .set({ next_attempt_at: until })
    .where("target", "=", target).where("status", "=", "pending")
    .where("next_attempt_at", "<", until)
    .where((eb) => eb.or([eb("claimed_until", "is", null), eb("claimed_until", "<", now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The outbox's counts by status, for figures and tests. */
export async function outboxCounts(
  db: Db,
): Promise<{ pending: number; delivered: number; failed: number }> {
  const rows = await db.selectFrom("notifications")
    .select(["status", (eb) => eb.fn.countAll<string>().as("n")])
    .groupBy("status").execute();
  const counts = { pending: 0, delivered: 0, failed: 0 };
  for (const r of rows) counts[r.status] = Number(r.n);
  return counts;
}
