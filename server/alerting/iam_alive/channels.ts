/**
 * The I'm alive channels: `log` (a line on stdout), and `webhook` and `mail`, which are the
 * notification providers of those kinds (`server/alerting/notify/providers/`) with settings from the
 * environment (`IAM_ALIVE_WEBHOOK_URL`/`_SECRET`; `SMTP_URL`, `MAIL_FROM`, `MAIL_TO`), sent by the
 * one sender (`server/alerting/notify/sender.ts`): the same requests, signing, network policy and answer
 * rules as notification targets. One attempt per delivery: the outbox retries.
 *
 * @module
 */
import type { IamAliveChannel, IamAliveReport } from "@probe/shared";
import type { ConnectionOptions } from "node:tls";
import type { IamAliveConfig } from "../../base/config.ts";
import type { DeliveryResult } from "../notify/delivery.ts";
import type { NotifyMessage, Provider } from "../notify/provider.ts";
import { mail } from "../notify/providers/mail.ts";
import { webhook } from "../notify/providers/webhook.ts";
import { createSender, type Sender } from "../notify/sender.ts";
import {
  createNetworkPolicy,
  type NetworkPolicy,
  type Resolver,
} from "../../base/outbound/network_policy.ts";
import { SERVICE_VERSION } from "../../base/version.ts";
import type { Clock } from "../../base/clock.ts";

/** One way a report goes out. */
export interface Channel {
  /** The variables this channel still needs; empty when it is configured. */
  missing: string[];
  /** Caveats of the configuration worth a warning at start-up. */
  caveats?: string[];
  /** Sends the report once; never throws. Only called when `missing` is empty. */
  deliver(report: IamAliveReport): Promise<DeliveryResult>;
}

/** Every channel of the settings has an implementation: the compiler checks the list. */
export type Channels = Record<IamAliveChannel, Channel>;

export interface ChannelDeps {
  config: IamAliveConfig;
  clock: Clock;
  /** Where the log channel writes its line; stdout by default, whatever the log level. */
  writeLine?: (line: string) => void;
  /**
   * The outbound network policy the webhook obeys: the probes' (main.ts). Without one, any address
   * (the URL is the operator's own).
   */
  policy?: NetworkPolicy;
  resolve?: Resolver;
  webhookTimeoutMs?: number;
  /** TLS options for SMTP (tests trust their own certificate this way). */
  mailTls?: ConnectionOptions;
}

/** Every address: what the webhook may reach when no policy is given. */
const ANYWHERE = createNetworkPolicy(["0.0.0.0/0", "::/0"]);

/** A channel that sends through a provider, with its settings. */
function providerChannel<S>(
  { send, clock }: { send: Sender; clock: Clock },
  provider: Provider,
  settings: S | undefined,
  missing: string[],
): Channel {
  return {
    missing: settings ? [] : missing,
    deliver: (report) => {
      // The sequence is the message's id: the key receivers drop repeats by.
      const message: NotifyMessage = { type: "iam_alive", id: String(report.sequence), report };
      return send(
        provider,
        provider.request(settings ?? {}, message, { now: new Date(clock.now()) }),
      );
    },
  };
}

/** The log, webhook and mail channels over the given configuration. */
export function createChannels(deps: ChannelDeps): Channels {
  const { config, clock } = deps;
  const writeLine = deps.writeLine ?? ((line: string) => console.log(line));
  const send = createSender({
    policy: deps.policy ?? ANYWHERE,
    resolve: deps.resolve,
    timeoutMs: deps.webhookTimeoutMs,
    userAgent: `probe-service/${SERVICE_VERSION} (I'm alive)`,
    now: () => new Date(clock.now()),
    ...(config.mail && {
      mail: { smtpUrl: config.mail.smtpUrl, from: config.mail.from, tls: deps.mailTls },
    }),
  });
  const webhookSettings = config.webhook && {
    url: config.webhook.url,
    ...(config.webhook.secret && { secret: config.webhook.secret }),
  };
  return {
    log: {
      missing: [],
      deliver: (report) => {
        writeLine(JSON.stringify({
          time: new Date(clock.now()).toISOString(),
          level: "info",
          msg: "iam_alive",
          report,
        }));
        return Promise.resolve({ outcome: "delivered", attempts: 1 });
      },
    },
    webhook: {
      ...providerChannel({ send, clock }, webhook, webhookSettings, ["IAM_ALIVE_WEBHOOK_URL"]),
      caveats: config.webhook && !config.webhook.secret
        ? ["IAM_ALIVE_WEBHOOK_SECRET is not set: webhook bodies go unsigned"]
        : [],
    },
    mail: providerChannel(
      { send, clock },
      mail,
      config.mail && { recipients: config.mail.to },
      ["SMTP_URL", "MAIL_FROM", "MAIL_TO"],
    ),
  };
}
