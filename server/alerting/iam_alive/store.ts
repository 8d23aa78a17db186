import {
  type IamAliveChannel,
  iamAliveChannel,
  type IamAliveDeliveriesInput,
  type IamAliveDelivery,
  type IamAliveReport,
  type IamAliveTrigger,
} from "@probe/shared";
import { sql } from "kysely";
import { enqueueMessages } from "../outbox/outbox.ts";
import type { Db } from "../../storage/database.ts";

const HOUR_MS = 3_600_000;

/** How many delivery records are kept; older ones are removed as new ones come in. */
export const DELIVERIES_KEPT = 1000;

/** A report this instance may send: its number, where it goes, and the previous report's time. */
export interface ClaimedReport {
  sequence: number;
  trigger: IamAliveTrigger;
  channels: IamAliveChannel[];
  intervalHours: number;
  /** The time of the previous scheduled report; null before the first. */
  previousReportAt: Date | null;
}

/** A scheduled report as claimed: its facts and the counts read in the claiming transaction. */
export interface ScheduledClaim extends ClaimedReport {
  counts: { projects: number; probes: number };
}

/** A scheduled report written to the outbox, one message per channel. */
export interface QueuedReport {
  report: IamAliveReport;
  channels: IamAliveChannel[];
}

/** The outbox type of an I'm alive report message. */
export const IAM_ALIVE_MESSAGE_TYPE = "iam_alive.report";
const TARGET_PREFIX = "iam_alive:";

/** The outbox target of a channel: `iam_alive:log`, `iam_alive:webhook`, `iam_alive:mail`. */
export const iamAliveTarget = (channel: IamAliveChannel) => `${TARGET_PREFIX}${channel}`;

/** The channel an outbox target names; null when it names none. */
export function channelOfTarget(target: string): IamAliveChannel | null {
  if (!target.startsWith(TARGET_PREFIX)) return null;
  const channel = iamAliveChannel.safeParse(target.slice(TARGET_PREFIX.length));
  return channel.success ? channel.data : null;
}

/**
 * The outbox id of a report's message to a channel. It follows from the report's sequence (which
 * never repeats) and the channel, so a second writer of the same report writes nothing new.
 */
export const reportMessageId = (sequence: number, channel: IamAliveChannel) =>
  `msg_iamalive_${sequence}_${channel}`;

const isDue = (nextReportAt: Date | null, now: Date) =>
  nextReportAt === null || nextReportAt.getTime() <= now.getTime();

/**
 * Whether a scheduled report is due at `now`, by a plain read (most polls find nothing due and
 * need take no lock); when one is, the time of the previous report, which the caller's runner
 * figures start from.
 */
export async function peekDueReport(
  { db, now }: { db: Db; now: Date },
): Promise<{ previousReportAt: Date | null } | null> {
  const peek = await db.selectFrom("iam_alive_settings")
    .select(["enabled", "next_report_at", "last_report_at"])
    .where("id", "=", 1)
    .executeTakeFirst();
  if (!peek?.enabled || !isDue(peek.next_report_at, now)) return null;
  return { previousReportAt: peek.last_report_at };
}

/**
 * Claims the scheduled report that is due at `now`, if any, and writes it to the outbox: one
 * message per selected channel (target `iam_alive:<channel>`, id {@link reportMessageId}), in the
 * transaction that claims it. The settings row is locked while the claim is written (an instance
 * that finds it locked leaves the report to the one holding it), and the next report is set one
 * interval after `now`: a long outage yields one report, not a backlog, and a restart finds the
 * report already claimed. `compose` builds the report from the claim (inside the transaction: it
 * must not touch the database).
 *
 * `previousReportAt` is what {@link peekDueReport} saw: when the row shows another previous report
 * by the time it is locked, another instance moved the schedule on meanwhile and nothing is
 * claimed (the next poll looks again), so the caller's runner figures always match the report.
 */
export async function claimDueReport(
  { db, now, previousReportAt, compose }: {
    db: Db;
    now: Date;
    previousReportAt: Date | null;
    compose: (claim: ScheduledClaim) => IamAliveReport;
  },
): Promise<QueuedReport | null> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("iam_alive_settings")
      .select(["enabled", "interval_hours", "channels", "last_report_at", "next_report_at"])
      .where("id", "=", 1)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!row?.enabled || !isDue(row.next_report_at, now)) return null;
    if (row.last_report_at?.getTime() !== previousReportAt?.getTime()) return null;
    const claimed = await trx.updateTable("iam_alive_settings")
      .set({
        report_sequence: sql`report_sequence + 1`,
        last_report_at: now,
        next_report_at: new Date(now.getTime() + row.interval_hours * HOUR_MS),
      })
      .where("id", "=", 1)
      .returning(["report_sequence"])
      .executeTakeFirstOrThrow();
    const channels = row.channels as IamAliveChannel[];
    const report = compose({
      sequence: claimed.report_sequence,
      trigger: "schedule",
      channels,
      intervalHours: row.interval_hours,
      previousReportAt: row.last_report_at,
      counts: await inventoryCounts({ db: trx }),
    });
    await enqueueMessages(
      trx,
      channels.map((channel) => ({
        id: reportMessageId(report.sequence, channel),
        target: iamAliveTarget(channel),
        type: IAM_ALIVE_MESSAGE_TYPE,
        payload: report,
      })),
    );
    return { report, channels };
  });
}

/**
 * Which attempt at an outbox message this is (the outbox counts them as it claims); 1 when the
 * message is not in the outbox.
 */
export async function messageAttempt({ db, id }: { db: Db; id: string }): Promise<number> {
  const row = await db.selectFrom("notifications").select("attempts").where("id", "=", id)
    .executeTakeFirst();
  return Math.max(1, row?.attempts ?? 1);
}

/** Takes a number for a test report; the schedule is left as it is. */
export async function claimTestReport({ db }: { db: Db }): Promise<ClaimedReport> {
  const row = await db.updateTable("iam_alive_settings")
    .set({ report_sequence: sql`report_sequence + 1` })
    .where("id", "=", 1)
    .returning(["report_sequence", "channels", "interval_hours", "last_report_at"])
    .executeTakeFirstOrThrow();
  return {
    sequence: row.report_sequence,
    trigger: "test",
    channels: row.channels as IamAliveChannel[],
    intervalHours: row.interval_hours,
    previousReportAt: row.last_report_at,
  };
}

/** The channels selected now, and whether reporting is on. */
export async function selectedChannels(
  { db }: { db: Db },
): Promise<{ enabled: boolean; channels: IamAliveChannel[] }> {
  const row = await db.selectFrom("iam_alive_settings")
    .select(["enabled", "channels"])
    .where("id", "=", 1)
    .executeTakeFirstOrThrow();
  return { enabled: row.enabled, channels: row.channels as IamAliveChannel[] };
}

/** How many projects and probes there are, for the report. */
export async function inventoryCounts(
  { db }: { db: Db },
): Promise<{ projects: number; probes: number }> {
  const row = await db.selectNoFrom((eb) => [
    eb.selectFrom("projects").select((e) => e.fn.countAll().as("n")).as("projects"),
    eb.selectFrom("probes").select((e) => e.fn.countAll().as("n")).as("probes"),
  ]).executeTakeFirstOrThrow();
  return { projects: Number(row.projects), probes: Number(row.probes) };
}

export interface DeliveryRecord {
  sequence: number;
  trigger: IamAliveTrigger;
  channel: IamAliveChannel;
  outcome: IamAliveDelivery["outcome"];
  attempts: number;
  error: string | null;
  instanceId: string;
  startedAt: Date;
  durationMs: number;
}

/** Records how deliveries ended and drops records beyond the newest DELIVERIES_KEPT. */
export async function recordDeliveries(
  { db, deliveries }: { db: Db; deliveries: DeliveryRecord[] },
): Promise<void> {
  if (deliveries.length === 0) return;
  await db.insertInto("iam_alive_deliveries")
    .values(deliveries.map((d) => ({
      sequence: d.sequence,
      trigger: d.trigger,
      channel: d.channel,
      outcome: d.outcome,
      attempts: d.attempts,
      error: d.error,
      instance_id: d.instanceId,
      started_at: d.startedAt,
      duration_ms: Math.round(d.durationMs),
    })))
    .execute();
  await db.deleteFrom("iam_alive_deliveries")
    .where("id", "<=", (eb) =>
      eb.selectFrom("iam_alive_deliveries")
        .select((e) =>
          sql<number>`coalesce(max(${e.ref("id")}), 0) - ${DELIVERIES_KEPT}`.as("cut")
        ))
    .execute();
}

/** The most recent deliveries, newest first. */
export async function listDeliveries(
  { db, input }: { db: Db; input: IamAliveDeliveriesInput },
): Promise<IamAliveDelivery[]> {
  const rows = await db.selectFrom("iam_alive_deliveries")
    .select([
      "started_at",
      "sequence",
      "trigger",
      "channel",
      "outcome",
      "attempts",
      "error",
      "duration_ms",
      "instance_id",
    ])
    .orderBy("id", "desc")
    .limit(input.limit)
    .execute();
  return rows.map(({ started_at, ...rest }) => ({ time: started_at.toISOString(), ...rest }));
}
