import type { IamAliveChannel, IamAliveReport } from "@probe/shared";
import type { ConnectionOptions } from "node:tls";
import type { IamAliveConfig } from "../config.ts";
import type { DeliveryResult } from "../notify/delivery.ts";
import { sendMail } from "../notify/mail.ts";
import { type OutboundCheck, postWebhook } from "../notify/webhook.ts";
import { SERVICE_VERSION } from "../version.ts";
import type { Clock } from "./clock.ts";
import { renderReportText, reportSubject } from "./report.ts";

/** How a channel sends a report. */
export interface DeliverOptions {
  /**
   * One try, without retries of the channel's own: the outbox retries scheduled reports, with its
   * own back-off. Without it (a test report) the webhook retries up to 5 times at once.
   */
  once?: boolean;
}

/** One way a report goes out. */
export interface Channel {
  /** The variables this channel still needs; empty when it is configured. */
  missing: string[];
  /** Caveats of the configuration worth a warning at start-up. */
  caveats?: string[];
  /** Sends the report; never throws. Only called when `missing` is empty. */
  deliver(
    report: IamAliveReport,
    signal: AbortSignal,
    options?: DeliverOptions,
  ): Promise<DeliveryResult>;
}

/** Every channel of the settings has an implementation: the compiler checks the list. */
export type Channels = Record<IamAliveChannel, Channel>;

export interface ChannelDeps {
  config: IamAliveConfig;
  clock: Clock;
  /** Where the log channel writes its line; stdout by default, whatever the log level. */
  writeLine?: (line: string) => void;
  fetch?: typeof fetch;
  webhookBackoffMs?: (retry: number) => number;
  webhookTimeoutMs?: number;
  /** The probe runner's outbound network policy, once it is wired in; none by default. */
  checkOutboundUrl?: OutboundCheck;
  /** TLS options for SMTP (tests trust their own certificate this way). */
  mailTls?: ConnectionOptions;
}

/** The log, webhook and mail channels over the given configuration. */
export function createChannels(deps: ChannelDeps): Channels {
  const { config, clock } = deps;
  const writeLine = deps.writeLine ?? ((line: string) => console.log(line));
  return {
    log: {
      missing: [],
      deliver: (report) => {
        writeLine(JSON.stringify({
          time: clock.now().toISOString(),
          level: "info",
          msg: "iam_alive",
          report,
        }));
        return Promise.resolve({ outcome: "delivered", attempts: 1 });
      },
    },
    webhook: {
      missing: config.webhook ? [] : ["IAM_ALIVE_WEBHOOK_URL"],
      caveats: config.webhook && !config.webhook.secret
        ? ["IAM_ALIVE_WEBHOOK_SECRET is not set: webhook bodies go unsigned"]
        : [],
      deliver: async (report, signal, options) => {
        const result = await postWebhook({
          url: config.webhook!.url,
          secret: config.webhook!.secret,
          body: JSON.stringify(report),
          // The sequence, not the outbox message id: the same key for a report on every attempt,
          // scheduled or test, as receivers written before the outbox expect.
          idempotencyKey: String(report.sequence),
        }, {
          fetch: deps.fetch,
          now: () => clock.now(),
          sleep: (ms, s) => clock.sleep(ms, s),
          backoffMs: deps.webhookBackoffMs,
          timeoutMs: deps.webhookTimeoutMs,
          checkOutboundUrl: deps.checkOutboundUrl,
          signal,
          userAgent: `probe-service/${SERVICE_VERSION} (I'm alive)`,
          ...(options?.once && { maxAttempts: 1 }),
        });
        // A single try is retried by the outbox: its error is the try's, not a "gave up".
        return options?.once && result.error
          ? { ...result, error: result.error.replace(/^gave up after 1 attempt; last: /, "") }
          : result;
      },
    },
    mail: {
      missing: config.mail ? [] : ["SMTP_URL", "MAIL_FROM", "MAIL_TO"],
      deliver: (report) =>
        sendMail({ ...config.mail!, tls: deps.mailTls }, {
          subject: reportSubject(report),
          text: renderReportText(report),
        }),
    },
  };
}
