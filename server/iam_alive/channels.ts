import type { IamAliveChannel, IamAliveReport } from "@probe/shared";
import type { ConnectionOptions } from "node:tls";
import type { IamAliveConfig } from "../config.ts";
import type { DeliveryResult } from "../notify/delivery.ts";
import { sendMail } from "../notify/mail.ts";
import { type OutboundCheck, postWebhook } from "../notify/webhook.ts";
import { SERVICE_VERSION } from "../version.ts";
import type { Clock } from "./clock.ts";
import { renderReportText, reportSubject } from "./report.ts";

/** One way a report goes out. */
export interface Channel {
  /** The variables this channel still needs; empty when it is configured. */
  missing: string[];
  /** Caveats of the configuration worth a warning at start-up. */
  caveats?: string[];
  /** Sends the report; never throws. Only called when `missing` is empty. */
  deliver(report: IamAliveReport, signal: AbortSignal): Promise<DeliveryResult>;
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
      deliver: (report, signal) =>
        postWebhook({
          url: config.webhook!.url,
          secret: config.webhook!.secret,
          body: JSON.stringify(report),
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
        }),
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
