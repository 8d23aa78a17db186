import { type DeliveryResult, redactUrls } from "./delivery.ts";
import { signStandardWebhook, textKey } from "./standard_webhooks.ts";
import { sleep as sleepFor } from "../sleep.ts";

/** Asks whether an outbound URL may be called; the probe runner's network policy fits here. */
export type OutboundCheck = (url: URL) => Promise<{ allowed: boolean; reason?: string }>;

export interface WebhookRequest {
  url: string;
  /**
   * Signs the body when given, twice: `X-Signature` (the service's own scheme) and per Standard
   * Webhooks, keyed with the secret's UTF-8 bytes. A receiver without a secret (a ping URL) gets
   * no signature.
   */
  secret?: string;
  /** JSON text, sent as-is and signed as-is. */
  body: string;
  /** Sent as `Idempotency-Key` and as `webhook-id`; the same on every attempt. */
  idempotencyKey: string;
}

export interface WebhookOptions {
  fetch?: typeof fetch;
  now?: () => Date;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The wait before retry `n` (1-based); 1 s, 2 s, 4 s, 8 s by default. */
  backoffMs?: (retry: number) => number;
  maxAttempts?: number;
  timeoutMs?: number;
  checkOutboundUrl?: OutboundCheck;
  /** Stops retrying (and the attempt in flight) when aborted. */
  signal?: AbortSignal;
  userAgent?: string;
}

export const SIGNATURE_HEADER = "x-signature";
export const TIMESTAMP_HEADER = "x-timestamp";
export const IDEMPOTENCY_HEADER = "idempotency-key";

const DEFAULT_ATTEMPTS = 5;
const DEFAULT_TIMEOUT_MS = 10_000;
const defaultBackoff = (retry: number) => 1000 * 2 ** (retry - 1);

/**
 * The signature of a webhook body: `sha256=` and the hex HMAC-SHA256, keyed with the secret, of
 * `<timestamp>.<body>`, where the timestamp is the `X-Timestamp` header (Unix seconds).
 */
export async function signWebhook(secret: string, timestamp: string, body: string) {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, enc.encode(`${timestamp}.${body}`)),
  );
  return `sha256=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

type Attempt = { done: true; result: DeliveryResult } | { done: false; error: string };

/**
 * POSTs a JSON body, signed, retrying network errors and 5xx answers with exponential backoff;
 * a 2xx delivers, any other answer is final. Redirects are not followed: the target named is the
 * one the outbound policy allowed. Never throws.
 */
export async function postWebhook(
  request: WebhookRequest,
  options: WebhookOptions = {},
): Promise<DeliveryResult> {
  const fetchFn = options.fetch ?? fetch;
  const now = options.now ?? (() => new Date());
  const sleep = options.sleep ?? sleepFor;
  const backoff = options.backoffMs ?? defaultBackoff;
  const maxAttempts = options.maxAttempts ?? DEFAULT_ATTEMPTS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { outcome: "failed", attempts: 0, error: "the webhook URL is not a valid URL" };
  }
  if (options.checkOutboundUrl) {
    let verdict;
    try {
      verdict = await options.checkOutboundUrl(url);
    } catch {
      verdict = { allowed: false, reason: "the policy check failed" };
    }
    if (!verdict.allowed) {
      const reason = verdict.reason ? `: ${redactUrls(verdict.reason)}` : "";
      return {
        outcome: "failed",
        attempts: 0,
        error: `blocked by the outbound network policy${reason}`,
      };
    }
  }

  let lastError = "not attempted";
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (attempt > 1) await sleep(backoff(attempt - 1), options.signal);
    if (options.signal?.aborted) {
      return { outcome: "failed", attempts: attempt - 1, error: `stopped; ${lastError}` };
    }
    const outcome = await attemptOnce(url, request, attempt, {
      fetchFn,
      now,
      timeoutMs,
      signal: options.signal,
      userAgent: options.userAgent,
    });
    if (outcome.done) return outcome.result;
    lastError = outcome.error;
  }
  return {
    outcome: "failed",
    attempts: maxAttempts,
    error: `gave up after ${maxAttempts} attempt${
      maxAttempts === 1 ? "" : "s"
    }; last: ${lastError}`,
  };
}

async function attemptOnce(
  url: URL,
  request: WebhookRequest,
  attempt: number,
  o: {
    fetchFn: typeof fetch;
    now: () => Date;
    timeoutMs: number;
    signal?: AbortSignal;
    userAgent?: string;
  },
): Promise<Attempt> {
  const timestamp = String(Math.floor(o.now().getTime() / 1000));
  const headers = new Headers({
    "content-type": "application/json",
    [TIMESTAMP_HEADER]: timestamp,
    [IDEMPOTENCY_HEADER]: request.idempotencyKey,
  });
  if (o.userAgent) headers.set("user-agent", o.userAgent);
  if (request.secret) {
    headers.set(SIGNATURE_HEADER, await signWebhook(request.secret, timestamp, request.body));
    const standard = signStandardWebhook(textKey(request.secret), {
      id: request.idempotencyKey,
      timestamp: new Date(Number(timestamp) * 1000),
      body: request.body,
    });
    for (const [name, value] of Object.entries(standard)) headers.set(name, value);
  }
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout;
  let response: Response;
  try {
    response = await o.fetchFn(url, {
      method: "POST",
      headers,
      body: request.body,
      redirect: "manual",
      signal,
    });
  } catch (error) {
    if (timeout.aborted) return { done: false, error: `timed out after ${o.timeoutMs} ms` };
    if (o.signal?.aborted) return { done: false, error: "stopped" };
    return { done: false, error: summarizeFetchFailure(error) };
  }
  await response.body?.cancel().catch(() => {});
  const status = response.status;
  if (status >= 200 && status < 300) {
    return { done: true, result: { outcome: "delivered", attempts: attempt } };
  }
  if (status >= 500) return { done: false, error: `HTTP ${status}` };
  const note = status >= 300 && status < 400 ? " (redirects are not followed)" : "";
  return {
    done: true,
    result: { outcome: "failed", attempts: attempt, error: `HTTP ${status}${note}` },
  };
}

/** Failures of Deno's fetch, by the words of its (hyper's, rustls') message, and their summary. */
const FETCH_FAILURES: [RegExp, string][] = [
  [/connection refused/i, "network error: connection refused"],
  [/dns error|failed to lookup|name or service not known/i, "network error: host not found"],
  [/NotValidForName|not valid for name/i, "tls: certificate does not match the host name"],
  [/invalid peer certificate: Expired/i, "tls: certificate expired"],
  [/invalid peer certificate|UnknownIssuer|self.signed/i, "tls: certificate not trusted"],
  [/certificate|tls|handshake|corrupt message|alert/i, "tls: handshake failed"],
  [/connection reset/i, "network error: connection reset"],
  [
    /closed before|connection closed|broken pipe|unexpected eof/i,
    "network error: connection closed",
  ],
  [/invalid HTTP|parse/i, "network error: invalid HTTP response"],
  [/unreachable/i, "network error: host unreachable"],
  [/timed out/i, "network error: timed out"],
];

/**
 * A failed fetch in fixed words. Deno's fetch says "fetch failed", gives no code, and puts the
 * reason in the cause's message, with the URL (which may carry a token) in front: that message
 * is classified, never copied, so neither the URL nor anything the peer sent can end up in the
 * stored delivery error.
 */
function summarizeFetchFailure(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  // What follows the URL is Deno's own: "…for url (<url>): client error (Connect): …".
  const at = message.lastIndexOf("client error (");
  const reason = at >= 0 ? message.slice(at) : redactUrls(message);
  return FETCH_FAILURES.find(([pattern]) => pattern.test(reason))?.[1] ?? "network error";
}
