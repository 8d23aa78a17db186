/**
 * What a kind of notification target is: a **provider**. Each kind is one file in
 * `server/alerting/notify/providers/`, registered in the list of `providers/mod.ts`; everything else (the
 * API's schemas, storage, masking, the dashboard's form, the outbox, the sender, retries, signing)
 * is built from what the provider declares.
 *
 * Writing one (see `providers/slack.ts` for a short example):
 *
 * 1. `kind`, `label`, `description`, and `fields`: each setting with its zod rules (`schema`), whether it is
 *    `required`, and, for a credential, `secret: { mask }`. A secret is stored apart, used to send
 *    and never read back: reads, errors, logs, exports and backups' readable parts show
 *    `mask(value)` (computed once, when the value is written). A field name means one thing across
 *    kinds (`url` is always an http(s) URL): reuse the schemas of `fields.ts`. A vendor's base URL
 *    is a `url` field with a `default`, so tests, self-hosted servers and other regions override it.
 * 2. `request(settings, message, context)`: how a message becomes the vendor's request. A message is
 *    an alert event (`target.test` for a test send) or an I'm alive report. An HTTP request is its
 *    method, URL, headers and body; mail is a message (recipients, subject, text). Every text from
 *    probes, projects and peers is data: escape it for the vendor's markup, cut it to its limits.
 * 3. `answer(response)` (optional): whether the vendor's answer means delivered, retry later or
 *    give up. {@link httpVerdict} (2xx delivered; 429, 5xx and 3xx retried, `Retry-After`
 *    honoured; other 4xx given up) is the default; for mail, `answerMail` and {@link smtpVerdict}
 *    (a 5xx refusal of the recipients or message given up). Errors are fixed words, never the
 *    vendor's text.
 * 4. A test in `providers/<kind>_test.ts` against a local receiver, and a row in
 *    docs/notification_targets.md.
 *
 * The sender (`sender.ts`) makes the request under the outbound network policy, signs it when the
 * request asks (`sign`, Standard Webhooks), and the outbox retries what is to be retried.
 *
 * @module
 */
import type { AlertEvent, IamAliveReport } from "@probe/shared";
import type { z } from "zod";
import type { SigningKey } from "./standard_webhooks.ts";

/** One setting of a kind of target. */
export interface SettingField {
  /** The value's rules; a problem's message never repeats a secret value. */
  schema: z.ZodType;
  /** Needed on create. */
  required?: boolean;
  /** Taken when the setting is not given (a vendor's public base URL). */
  default?: string;
  /**
   * A credential: stored apart, never answered, logged or put in an error. Reads show
   * `mask(value)`.
   */
  secret?: { mask: (value: string) => string };
  /**
   * Makes the value on create when none is given (a signing key); the create answer carries it in
   * full, that once.
   */
  generate?: () => string;
  /** How the dashboard's form asks for it. */
  form: { label: string; input: "url" | "text" | "secret" | "emails"; help?: string };
}

export type Fields = Readonly<Record<string, SettingField>>;

/** The settings a provider is given to send: its fields' values (optional ones may be absent). */
export type SettingsOf<F extends Fields> =
  & { [K in keyof F as F[K] extends { required: true } ? K : never]: z.infer<F[K]["schema"]> }
  & {
    [K in keyof F as F[K] extends { required: true } ? never : K]?: z.infer<F[K]["schema"]>;
  };

/** What is sent: an alert event (a test send is a `target.test` event) or an I'm alive report. */
export type NotifyMessage =
  | {
    type: "alert";
    /** Stable across retries (`msg_…`): receivers drop repeats by it. */
    id: string;
    event: AlertEvent;
  }
  | {
    type: "iam_alive";
    /** The report's sequence: the key I'm alive receivers drop repeats by. */
    id: string;
    report: IamAliveReport;
  };

/** How a request is signed, when it is (Standard Webhooks; see `standard_webhooks.ts`). */
export interface Signing {
  /** The `webhook-id`: the message's id. */
  id: string;
  /** The key; null sends it unsigned. */
  key: SigningKey | null;
  /**
   * Also the service's own `X-Timestamp` (always) and `X-Signature` (with a key) headers, which
   * the I'm alive webhook's receivers were written against.
   */
  legacy?: boolean;
}

export interface HttpRequest {
  transport: "http";
  method: "POST" | "PUT" | "GET";
  url: string;
  /** `content-type` is `application/json` unless given; `user-agent` is the sender's. */
  headers?: Record<string, string>;
  body?: string;
  sign?: Signing;
}

export interface MailRequest {
  transport: "mail";
  to: string[];
  subject: string;
  text: string;
}

export type VendorRequest = HttpRequest | MailRequest;

/** A POST of `body` as JSON: what most vendors' webhooks take. */
export function postJson(
  url: string,
  body: unknown,
  more: Pick<HttpRequest, "headers" | "sign"> = {},
): HttpRequest {
  return { transport: "http", method: "POST", url, body: JSON.stringify(body), ...more };
}

/** What the vendor answered over HTTP (its body's first 16 KiB). */
export interface HttpAnswer {
  status: number;
  /** Names lower-cased. */
  headers: Record<string, string>;
  body: string;
}

/** What an SMTP server answered: delivered, or refused (for good, or perhaps not). */
export interface SmtpAnswer {
  delivered: boolean;
  /** A 5xx reply to the sender, the recipients or the message: sending again repeats it. */
  permanent: boolean;
  /** Fixed words (`smtp: recipients refused (550)`); none when delivered. */
  error?: string;
}

/** An SMTP answer's meaning: a permanent refusal is given up, anything else retried. */
export function smtpVerdict(answer: SmtpAnswer): Verdict {
  if (answer.delivered) return { outcome: "delivered" };
  const error = answer.error ?? "smtp: failed";
  return answer.permanent ? { outcome: "give_up", error } : { outcome: "retry", error };
}

/** What an answer means; `error` is fixed words, never the vendor's text. */
export type Verdict =
  | { outcome: "delivered" }
  | { outcome: "retry"; error: string; retryAfterMs?: number }
  | { outcome: "give_up"; error: string };

export interface RequestContext {
  now: Date;
}

/** A kind of notification target. */
export interface Provider<F extends Fields = Fields> {
  /** Its name in the API (`webhook`, `slack`, …): lower case, stable. */
  kind: string;
  /** Its name for people (`Slack`). */
  label: string;
  /** What it sends, in a line for the dashboard's form (`A Slack incoming webhook`). */
  description?: string;
  fields: F;
  /** Rules across fields, or beyond a field's schema, on the fields given. */
  check?(given: Partial<SettingsOf<F>>): { path: string; message: string }[];
  request(settings: SettingsOf<F>, message: NotifyMessage, context: RequestContext): VendorRequest;
  /** What an HTTP answer means (at `now`); {@link httpVerdict} when absent. */
  answer?(answer: HttpAnswer, now: Date): Verdict;
  /** What an SMTP answer means (a mail provider's); {@link smtpVerdict} when absent. */
  answerMail?(answer: SmtpAnswer): Verdict;
}

/** A provider, its settings typed by its fields. */
export function defineProvider<F extends Fields>(provider: Provider<F>): Provider<F> {
  return provider;
}

/** The longest a `Retry-After` is honoured: the outbox's longest back-off. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** `Retry-After` in milliseconds (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - now.getTime();
  }
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

/**
 * The usual meaning of an HTTP answer: 2xx delivered; 429 and 5xx retried (after `Retry-After`
 * when given); a redirect retried too (it is never followed: the URL named is the one the policy
 * allowed); any other 4xx given up (the request itself is wrong: retrying repeats it).
 */
export function httpVerdict(answer: HttpAnswer, now = new Date()): Verdict {
  const { status } = answer;
  if (status >= 200 && status < 300) return { outcome: "delivered" };
  if (status >= 300 && status < 400) return { outcome: "retry", error: "redirect not followed" };
  const error = `HTTP ${status}`;
  if (status === 429 || status >= 500) {
    const after = retryAfterMs(answer.headers["retry-after"], now);
    return after === undefined
      ? { outcome: "retry", error }
      : { outcome: "retry", error, retryAfterMs: after };
  }
  return { outcome: "give_up", error };
}
