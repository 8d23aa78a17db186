/**
 * Sends one alert event to one notification target, by name: the built-in `log`, or a stored
 * webhook (signed per Standard Webhooks), Slack, Discord or mail target. One attempt per call:
 * retries and their back-off belong to the caller (the outbox), which passes the same message id
 * every time, so the `webhook-id` stays stable across retries.
 *
 * HTTP targets go through `outboundRequest`, the runner's pinned-address client: the URL obeys
 * the outbound network policy (`PROBE_ALLOW_NETWORKS`) at send time, and the connection is made
 * to the address that was checked. Redirects are not followed.
 *
 * @module
 */
import { type AlertEvent, LOG_TARGET } from "@probe/shared";
import type { ConnectionOptions } from "node:tls";
import type { Db } from "../db/database.ts";
import { errorFields, type Logger } from "../log.ts";
import { type TargetForDelivery, targetForDelivery } from "../domain/targets.ts";
import type { NetworkPolicy, Resolver } from "../outbound/network_policy.ts";
import { outboundRequest, type OutboundResult } from "../outbound/request.ts";
import { SERVICE_VERSION } from "../version.ts";
import type { DeliveryResult } from "./delivery.ts";
import { discordMessage, logLine, mailMessage, slackMessage } from "./formats.ts";
import { sendMail } from "./mail.ts";
import { signStandardWebhook } from "./standard_webhooks.ts";

/** One notification: its stable id (the `webhook-id`) and the event it carries. */
export interface NotifierMessage {
  id: string;
  event: AlertEvent;
}

export interface Notifier {
  /** Sends one message to the target named; never throws. */
  send(target: string, message: NotifierMessage): Promise<DeliveryResult>;
}

/** The server's mail settings mail targets send with (their recipients are their own). */
export interface NotifierMailSettings {
  smtpUrl: string;
  from: string;
  /** TLS options for SMTP, such as a private CA (tests trust their own certificate). */
  tls?: ConnectionOptions;
}

export interface NotifierDeps {
  db: Db;
  /** The outbound network policy: the probe runner's (`PROBE_ALLOW_NETWORKS`). */
  policy: NetworkPolicy;
  /** Name resolution; the system's by default. */
  resolve?: Resolver;
  /** Certificate authorities to trust instead of the system's (PEM), for tests. */
  ca?: string;
  /** `SMTP_URL` and `MAIL_FROM`; without them mail targets are not configured. */
  mail?: NotifierMailSettings;
  /** Where the log target writes its line; stdout by default, whatever the log level. */
  writeLine?: (line: string) => void;
  /** Bounds each attempt (resolution, connection, answer); 10 s by default. */
  timeoutMs?: number;
  now?: () => Date;
  /** Told of unexpected failures (the database, say); they end as `internal error`. */
  log?: Logger;
  /**
   * Where the dashboard is reached (`PUBLIC_URL`, or the address the service listens at): each
   * event about a probe links to its page under it. Without it events have no link.
   */
  publicUrl?: string;
}

export const DEFAULT_NOTIFY_TIMEOUT_MS = 10_000;
const USER_AGENT = `probe-service/${SERVICE_VERSION} (alerts)`;
const NOT_FOUND: DeliveryResult = { outcome: "failed", attempts: 0, error: "target not found" };

/** A request's outcome as a delivery: 2xx delivers; anything else is a summary, never text. */
export function deliveryOf(result: OutboundResult): DeliveryResult {
  switch (result.kind) {
    case "response":
      return result.status >= 200 && result.status < 300
        ? { outcome: "delivered", attempts: 1 }
        : { outcome: "failed", attempts: 1, error: `HTTP ${result.status}` };
    case "blocked":
      return { outcome: "failed", attempts: 0, error: result.reason };
    case "timeout":
      return { outcome: "failed", attempts: result.address === null ? 0 : 1, error: "timeout" };
    case "failed": {
      // With redirects off, a 3xx answer with a Location ends as "more than 0 redirects".
      const error = /^more than \d+ redirects?$/.test(result.reason)
        ? "redirect not followed"
        : result.reason;
      return { outcome: "failed", attempts: result.address === null ? 0 : 1, error };
    }
  }
}

/**
 * The event a target test sends: `target.test`, naming the target, with no incident. Its
 * project is `probe-service`, so the subject reads `TEST probe-service: test of target <name>`.
 */
export function testEvent(target: string, at: Date): AlertEvent {
  return {
    type: "target.test",
    timestamp: at.toISOString(),
    data: {
      incident_id: null,
      project: "probe-service",
      probe_id: "test",
      label: `test of target ${target}`,
      url: null,
      link: null,
      state: "up",
      cause: null,
      error: null,
      http_status: null,
      failed_checks: null,
      started_at: null,
      resolved_at: null,
      duration_seconds: null,
      runs_failed: null,
      locations: null,
    },
  };
}

/**
 * A probe's page in the dashboard under `base` (its hash route, as `server/ui/routes.js` reads
 * it): `https://probes.example.com/#/projects/shop/probes/0123456789abcdef`.
 */
export function probeLink(base: string, project: string, probeId: string): string {
  const part = encodeURIComponent;
  return `${base.replace(/\/+$/, "")}/#/projects/${part(project)}/probes/${part(probeId)}`;
}

/**
 * The event as it is sent: with the link to its probe's page (none for a test, or without a
 * public URL), and every field, those added since it was queued too (as null).
 */
export function eventToSend(event: AlertEvent, publicUrl: string | undefined): AlertEvent {
  const d = event.data;
  const link = publicUrl && event.type !== "target.test"
    ? probeLink(publicUrl, d.project, d.probe_id)
    : null;
  return {
    ...event,
    data: {
      ...d,
      url: d.url ?? null,
      link,
      error: d.error ?? null,
      http_status: d.http_status ?? null,
      failed_checks: d.failed_checks ?? null,
    },
  };
}

/** The sender of alert events to notification targets. */
export function createNotifier(deps: NotifierDeps): Notifier {
  const now = deps.now ?? (() => new Date());
  const timeoutMs = deps.timeoutMs ?? DEFAULT_NOTIFY_TIMEOUT_MS;
  const writeLine = deps.writeLine ?? ((line: string) => console.log(line));

  const postJson = async (url: string, body: string, headers: Record<string, string> = {}) =>
    deliveryOf(
      await outboundRequest({
        url,
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": USER_AGENT, ...headers },
        body,
      }, {
        policy: deps.policy,
        resolve: deps.resolve,
        ca: deps.ca,
        timeoutMs,
        // The target named is the one the policy allowed and the signature is for.
        maxRedirects: 0,
      }),
    );

  const deliver = (target: TargetForDelivery, { id, event }: NotifierMessage) => {
    switch (target.kind) {
      case "webhook": {
        const body = JSON.stringify(event);
        const signed = signStandardWebhook(target.secret, { id, timestamp: now(), body });
        return postJson(target.url, body, { ...signed });
      }
      case "slack":
        return postJson(target.url, JSON.stringify(slackMessage(event)));
      case "discord":
        return postJson(target.url, JSON.stringify(discordMessage(event)));
      case "mail":
        if (!deps.mail) {
          return Promise.resolve<DeliveryResult>({
            outcome: "not_configured",
            attempts: 0,
            error: "not configured: SMTP_URL, MAIL_FROM",
          });
        }
        return sendMail({
          smtpUrl: deps.mail.smtpUrl,
          from: deps.mail.from,
          to: target.recipients,
          tls: deps.mail.tls,
          timeoutMs,
        }, mailMessage(event));
    }
  };

  return {
    async send(name, queued) {
      const message = { ...queued, event: eventToSend(queued.event, deps.publicUrl) };
      try {
        if (name === LOG_TARGET) {
          writeLine(logLine(message.event, { id: message.id, target: name, time: now() }));
          return { outcome: "delivered", attempts: 1 };
        }
        const target = await targetForDelivery({ db: deps.db, name });
        if (!target) return NOT_FOUND;
        return await deliver(target, message);
      } catch (error) {
        // The result is stored and shown: a fixed summary. The details go to the log.
        deps.log?.warn("notification not sent", { target: name, ...errorFields(error) });
        return { outcome: "failed", attempts: 0, error: "internal error" };
      }
    },
  };
}
