/**
 * The one sender of notifications: a provider's request made once, its answer judged. HTTP goes
 * through `outboundRequest`, the runner's pinned-address client: the URL obeys the outbound
 * network policy at send time, the connection is made to the address that was checked, and
 * redirects are not followed (the URL named is the one the policy allowed and the signature is
 * for). A request that asks to be signed is signed here, at the attempt's time (Standard
 * Webhooks). Mail goes through SMTP (nodemailer). One attempt per call: retries belong to the
 * outbox, which passes the same message id every time.
 *
 * @module
 */
import type { ConnectionOptions } from "node:tls";
import type { NetworkPolicy, Resolver } from "../../base/outbound/network_policy.ts";
import {
  type ConnectionPool,
  outboundRequest,
  type OutboundResult,
} from "../../base/outbound/request.ts";
import type { DeliveryResult } from "./delivery.ts";
import { smtpExchange } from "./mail.ts";
import {
  httpVerdict,
  type Provider,
  smtpVerdict,
  type VendorRequest,
  type Verdict,
} from "./provider.ts";
import { signingHeaders } from "./standard_webhooks.ts";

export const DEFAULT_NOTIFY_TIMEOUT_MS = 10_000;
/** How much of a vendor's answer its provider may read. */
const ANSWER_BYTES = 16 * 1024;

/** The server's SMTP settings mail is sent with (the recipients are the request's). */
export interface SmtpSettings {
  smtpUrl: string;
  from: string;
  /** TLS options for SMTP, such as a private CA (tests trust their own certificate). */
  tls?: ConnectionOptions;
}

export interface SenderOptions {
  /** The outbound network policy: the probe runner's (`PROBE_ALLOW_NETWORKS`). */
  policy: NetworkPolicy;
  /** Name resolution; the system's by default. */
  resolve?: Resolver;
  /** Certificate authorities to trust instead of the system's (PEM), for tests. */
  ca?: string;
  /** Without it mail is not configured; `missingMail` names what to set. */
  mail?: SmtpSettings;
  missingMail?: string;
  /** Bounds each attempt (resolution, connection, answer); 10 s by default. */
  timeoutMs?: number;
  userAgent: string;
  now?: () => Date;
  /** Connections kept between sends (per origin and checked address); none kept without it. */
  pool?: ConnectionPool;
}

/** Sends one request of a provider's, once; never throws. */
export type Sender = (provider: Provider, request: VendorRequest) => Promise<DeliveryResult>;

/** A verdict as a delivery result: a give-up is final, a retry may say when. */
export function resultOf(verdict: Verdict, attempts: number): DeliveryResult {
  switch (verdict.outcome) {
    case "delivered":
      return { outcome: "delivered", attempts };
    case "retry":
      return {
        outcome: "failed",
        attempts,
        error: verdict.error,
        ...(verdict.retryAfterMs !== undefined && { retryAfterMs: verdict.retryAfterMs }),
      };
    case "give_up":
      return { outcome: "failed", attempts, error: verdict.error, final: true };
  }
}

/** A request that got no answer, in fixed words (retried: the network may come back). */
function unanswered(result: Exclude<OutboundResult, { kind: "response" }>): DeliveryResult {
  switch (result.kind) {
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

export function createSender(options: SenderOptions): Sender {
  const now = options.now ?? (() => new Date());
  const timeoutMs = options.timeoutMs ?? DEFAULT_NOTIFY_TIMEOUT_MS;
  return async (provider, request) => {
    if (request.transport === "mail") {
      if (!options.mail) {
        return {
          outcome: "not_configured",
          attempts: 0,
          error: `not configured: ${options.missingMail ?? "SMTP_URL, MAIL_FROM"}`,
        };
      }
      const { result, permanent } = await smtpExchange(
        { ...options.mail, to: request.to, timeoutMs },
        request,
      );
      // Nothing sent (a bad configuration) is no answer: retried as it is.
      if (result.attempts === 0) return result;
      const answer = { delivered: result.outcome === "delivered", permanent, error: result.error };
      return resultOf((provider.answerMail ?? smtpVerdict)(answer), result.attempts);
    }
    const body = request.body ?? "";
    const headers = {
      "content-type": "application/json",
      "user-agent": options.userAgent,
      ...request.headers,
      ...(request.sign && signingHeaders(request.sign, body, now())),
    };
    const result = await outboundRequest(
      { url: request.url, method: request.method, headers, body: request.body ?? null },
      {
        policy: options.policy,
        resolve: options.resolve,
        ca: options.ca,
        pool: options.pool,
        timeoutMs,
        maxRedirects: 0,
        keepBody: true,
        maxBodyBytes: ANSWER_BYTES,
      },
    );
    if (result.kind !== "response") return unanswered(result);
    const answer = {
      status: result.status,
      headers: result.headers,
      body: result.body ? new TextDecoder().decode(result.body) : "",
    };
    return resultOf((provider.answer ?? httpVerdict)(answer, now()), 1);
  };
}
