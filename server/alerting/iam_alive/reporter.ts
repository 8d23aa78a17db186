import type {
  IamAliveChannel,
  IamAliveDelivery,
  IamAliveReport,
  IamAliveRunnerFigures,
  IamAliveTestResult,
} from "@probe/shared";
import type { Db } from "../../storage/database.ts";
import {
  claimDueReport,
  type ClaimedReport,
  claimTestReport,
  type DeliveryRecord,
  inventoryCounts,
  messageAttempt,
  peekDueReport,
  type QueuedReport,
  recordDeliveries,
  selectedChannels,
} from "./store.ts";
import { errorFields, type Logger } from "../../base/log.ts";
import type { DeliveryResult } from "../notify/delivery.ts";
import { SERVICE_VERSION } from "../../base/version.ts";
import type { Channels } from "./channels.ts";
import { type Clock, systemClock } from "../../base/clock.ts";
import { createLoop } from "../../base/loop.ts";
import { buildReport } from "./report.ts";

/** The probe runner's figures since a time; undefined when it has none. */
export type RunnerFiguresProvider = (since: Date) => Promise<IamAliveRunnerFigures | undefined>;

/** What the API needs of the reporter. */
export interface IamAliveControl {
  /** Sends one report now over the selected channels and tells how each fared. */
  sendTest(): Promise<IamAliveTestResult>;
  /** Looks for a due report at once (the settings just changed). */
  wake(): void;
}

/** One scheduled report's message to one channel, as the outbox hands it over. */
export interface ReportMessage {
  /** The outbox message id (`msg_iamalive_<sequence>_<channel>`). */
  id: string;
  channel: IamAliveChannel;
  report: IamAliveReport;
}

/** What the outbox's dispatch needs of the reporter. */
export interface IamAliveSender {
  /**
   * Sends a scheduled report over one channel, once (the outbox retries), and records the attempt
   * in the deliveries list; never throws.
   */
  deliverMessage(message: ReportMessage): Promise<DeliveryResult>;
}

export interface Reporter extends IamAliveControl, IamAliveSender {
  /** Warns about selected channels that lack configuration, then starts the loop. */
  start(): Promise<void>;
  /** Stops the loop and waits for reports in flight; call before the database closes. */
  stop(): Promise<void>;
  /**
   * Writes the scheduled report to the outbox (one message per selected channel) if one is due
   * and this instance claims it; the outbox's deliverer sends it.
   */
  runDue(): Promise<QueuedReport | null>;
  /** Logs a warning for each selected channel that lacks configuration (or has a caveat). */
  warnUnconfigured(): Promise<void>;
}

export interface ReporterOptions {
  db: Db;
  log: Logger;
  channels: Channels;
  clock?: Clock;
  /** Names this process in reports and delivery records; random by default. */
  instanceId?: string;
  version?: string;
  /** How often the database is asked whether a report is due; 5 s by default. */
  pollMs?: number;
  /** The probe runner's figures, once it is wired in; none by default. */
  runnerFigures?: RunnerFiguresProvider;
  /** Told when a scheduled report was written to the outbox (to wake the deliverer). */
  onQueued?: () => void;
  /** Told how each delivery ended (`/metrics`). */
  onDelivery?: (channel: IamAliveChannel, outcome: DeliveryResult["outcome"]) => void;
}

export const DEFAULT_POLL_MS = 5000;

/**
 * The I'm alive reporter: polls the database for a due report, claims it (so one instance of
 * several sends it), builds it and writes it to the outbox, one message per selected channel, in
 * the claiming transaction; the outbox's deliverer sends those (through {@link
 * IamAliveSender.deliverMessage}) at least once, retrying failures. A test report is sent at once
 * over every selected channel instead. Failures of one channel do not stop the others; every
 * attempt's outcome is recorded.
 */
export function createReporter(options: ReporterOptions): Reporter {
  const { db, log, channels } = options;
  const clock = options.clock ?? systemClock;
  const instanceId = options.instanceId ?? crypto.randomUUID();
  const version = options.version ?? SERVICE_VERSION;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const startedAt = new Date(clock.now());

  const inFlight = new Set<Promise<unknown>>();

  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    work.finally(() => inFlight.delete(work)).catch(() => {});
    return work;
  };

  const runnerFigures = figuresOrNone(options.runnerFigures, log);
  const deliverOne = channelDelivery({ channels, log, onDelivery: options.onDelivery });

  const compose = reportComposer({ version, instanceId, startedAt });

  /** Sends a test report over every selected channel at once, one attempt each. */
  async function send(claim: ClaimedReport): Promise<IamAliveTestResult> {
    const report = compose(
      claim,
      new Date(clock.now()),
      await inventoryCounts({ db }),
      await runnerFigures(claim.previousReportAt ?? startedAt),
    );
    const records = await Promise.all(
      claim.channels.map((channel) =>
        timedDelivery(channel, report, { clock, instanceId, deliverOne })
      ),
    );
    await recordDeliveries({ db, deliveries: records });
    logReportSent(log, report, records);
    return { report, deliveries: records.map(toDelivery) };
  }

  async function runDue(): Promise<QueuedReport | null> {
    const due = await peekDueReport({ db, now: new Date(clock.now()) });
    if (!due) return null;
    // Read before the claim: the claiming transaction holds the settings row and, on the embedded
    // database, the only connection, so nothing outside it may wait for the database meanwhile.
    const runner = await runnerFigures(due.previousReportAt ?? startedAt);
    const now = new Date(clock.now());
    const queued = await claimDueReport({
      db,
      now,
      previousReportAt: due.previousReportAt,
      compose: (claim) => compose(claim, now, claim.counts, runner),
    });
    if (!queued) return null;
    log.info("I'm alive report queued", {
      sequence: queued.report.sequence,
      channels: queued.channels,
    });
    options.onQueued?.();
    return queued;
  }

  const deliverMessage = (message: ReportMessage) =>
    deliverQueued(message, { db, log, clock, instanceId, deliverOne });

  const loop = createLoop({
    name: "I'm alive check",
    clock,
    log,
    everyMs: pollMs,
    // While the database fails, asked twice as late each time, up to a minute: one error line
    // each time, not one every poll.
    maxBackoffMs: Math.max(pollMs, 60_000),
    task: () => track(runDue()),
  });

  const warnUnconfigured = () => warnUnconfiguredChannels({ db, log, channels });

  return {
    async start() {
      if (!loop.stopped) return;
      await warnUnconfigured();
      loop.start();
    },
    async stop() {
      await loop.stop();
      await Promise.allSettled([...inFlight]);
    },
    wake: () => loop.wake(),
    runDue: () => track(runDue()),
    deliverMessage: (message) => track(deliverMessage(message)),
    sendTest: () => track((async () => send(await claimTestReport({ db })))()),
    warnUnconfigured,
  };
}

/** Delivers a report over one channel now, and what to record of it (its time and outcome). */
async function timedDelivery(
  channel: DeliveryRecord["channel"],
  report: Parameters<ReturnType<typeof channelDelivery>>[1],
  { clock, instanceId, deliverOne }: {
    clock: Clock;
    instanceId: string;
    deliverOne: ReturnType<typeof channelDelivery>;
  },
): Promise<DeliveryRecord> {
  const startedAt = new Date(clock.now());
  const started = performance.now();
  const result = await deliverOne(channel, report);
  return {
    sequence: report.sequence,
    trigger: report.trigger,
    channel,
    outcome: result.outcome,
    attempts: result.attempts,
    error: result.error ?? null,
    instanceId,
    startedAt,
    durationMs: performance.now() - started,
  };
}

function toDelivery(r: DeliveryRecord): IamAliveDelivery {
  return {
    time: r.startedAt.toISOString(),
    sequence: r.sequence,
    trigger: r.trigger,
    channel: r.channel,
    outcome: r.outcome,
    attempts: r.attempts,
    error: r.error,
    duration_ms: Math.round(r.durationMs),
    instance_id: r.instanceId,
  };
}

/** Delivers a report over one channel (not configured, or its own failure), told to `onDelivery`. */
function channelDelivery(
  { channels, log, onDelivery }: {
    channels: Channels;
    log: Logger;
    onDelivery: ReporterOptions["onDelivery"];
  },
): (channel: IamAliveChannel, report: IamAliveReport) => Promise<DeliveryResult> {
  const attempt = async (
    channel: IamAliveChannel,
    report: IamAliveReport,
  ): Promise<DeliveryResult> => {
    const impl = channels[channel];
    if (impl.missing.length > 0) {
      return {
        outcome: "not_configured",
        attempts: 0,
        error: `not configured: set ${impl.missing.join(", ")}`,
      };
    }
    try {
      return await impl.deliver(report);
    } catch (error) {
      // Channels return failures as values; an exception here is a bug, logged with its stack.
      log.error("I'm alive channel threw", { channel, ...errorFields(error) });
      return { outcome: "failed", attempts: 1, error: "unexpected error in the channel" };
    }
  };
  return async (channel, report) => {
    const result = await attempt(channel, report);
    onDelivery?.(channel, result.outcome);
    return result;
  };
}

/** Warns of each selected channel that is not configured, and of each channel's caveats. */
async function warnUnconfiguredChannels(
  { db, log, channels }: { db: Db; log: Logger; channels: Channels },
): Promise<void> {
  const { enabled, channels: selected } = await selectedChannels({ db });
  for (const channel of selected) {
    const { missing, caveats = [] } = channels[channel];
    if (missing.length > 0) {
      log.warn("I'm alive channel is selected but not configured", {
        channel,
        missing,
        enabled,
      });
    }
    for (const caveat of caveats) {
      log.warn(`I'm alive ${channel} channel: ${caveat}`, { channel });
    }
  }
}

/** The log of a test report: a warning per failed delivery, then one line of the outcomes. */
function logReportSent(log: Logger, report: IamAliveReport, records: DeliveryRecord[]): void {
  for (const r of records) {
    if (r.outcome !== "delivered") {
      log.warn("I'm alive delivery failed", {
        sequence: r.sequence,
        channel: r.channel,
        outcome: r.outcome,
        attempts: r.attempts,
        error: r.error,
      });
    }
  }
  log.info("I'm alive report sent", {
    sequence: report.sequence,
    trigger: report.trigger,
    outcomes: Object.fromEntries(records.map((r) => [r.channel, r.outcome])),
  });
}

/** Delivers a report the outbox holds, over its one channel, once; records the attempt. */
async function deliverQueued(
  { id, channel, report }: ReportMessage,
  { db, log, clock, instanceId, deliverOne }: {
    db: Db;
    log: Logger;
    clock: Clock;
    instanceId: string;
    deliverOne: ReturnType<typeof channelDelivery>;
  },
): Promise<DeliveryResult> {
  const startedAt = new Date(clock.now());
  const started = performance.now();
  const result = await deliverOne(channel, report);
  const record: DeliveryRecord = {
    sequence: report.sequence,
    trigger: report.trigger,
    channel,
    outcome: result.outcome,
    attempts: 1,
    error: result.error ?? null,
    instanceId,
    startedAt,
    durationMs: performance.now() - started,
  };
  try {
    // The row counts outbox attempts: the first try is 1, each retry one more.
    record.attempts = await messageAttempt({ db, id });
    await recordDeliveries({ db, deliveries: [record] });
  } catch (error) {
    // The outcome stands (a delivered report is not sent again for want of its record).
    log.error("I'm alive delivery not recorded", { id, channel, ...errorFields(error) });
  }
  if (result.outcome !== "delivered") {
    log.warn("I'm alive delivery failed", {
      sequence: report.sequence,
      channel,
      outcome: result.outcome,
      attempt: record.attempts,
      error: record.error,
    });
  }
  return result;
}

/** The runner's figures since a time, or none (with a warning) when they cannot be read. */
function figuresOrNone(
  read: ReporterOptions["runnerFigures"],
  log: Logger,
): (since: Date) => Promise<IamAliveRunnerFigures | undefined> {
  return async (since) => {
    if (!read) return undefined;
    try {
      return await read(since);
    } catch (error) {
      log.warn("I'm alive report goes without runner figures", errorFields(error));
      return undefined;
    }
  };
}

/** Builds a claimed report's text from what this instance knows of itself. */
function reportComposer(
  { version, instanceId, startedAt }: { version: string; instanceId: string; startedAt: Date },
) {
  return (
    claim: ClaimedReport,
    now: Date,
    counts: { projects: number; probes: number },
    runner: IamAliveRunnerFigures | undefined,
  ) =>
    buildReport({
      sequence: claim.sequence,
      trigger: claim.trigger,
      now,
      previousReportAt: claim.previousReportAt,
      version,
      instanceId,
      startedAt,
      intervalHours: claim.intervalHours,
      counts,
      runner,
    });
}
