/**
 * A vendor's API on loopback for the notification kinds' tests: it records each request (method,
 * path with query, headers, body) and answers with the next reply of its script (the last one
 * repeats): a status, headers and a body, as the vendor would.
 */
import { createNetworkPolicy } from "../base/outbound/network_policy.ts";
import type { DeliveryResult } from "../alerting/notify/delivery.ts";
import type { AlertEvent, AlertEventType } from "@probe/shared";
import type { Fields, NotifyMessage, Provider, SettingsOf } from "../alerting/notify/provider.ts";
import { createSender } from "../alerting/notify/sender.ts";

export interface VendorReply {
  status: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON. */
  body?: string | Record<string, unknown>;
}

export interface VendorCall {
  method: string;
  /** The path and query as sent (`/v2/alerts/x/close?identifierType=alias`). */
  path: string;
  headers: Headers;
  body: string;
}

export function vendorReceiver(script: VendorReply[]) {
  const received: VendorCall[] = [];
  /** When each request arrived (ms since the epoch), in order. */
  const arrivedAt: number[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    arrivedAt.push(Date.now());
    const url = new URL(req.url);
    received.push({
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: req.headers,
      body: await req.text(),
    });
    const reply = script[Math.min(received.length - 1, script.length - 1)];
    const json = typeof reply.body === "object";
    const body = typeof reply.body === "object" ? JSON.stringify(reply.body) : reply.body ?? "";
    return new Response(
      reply.status === 204 ? null : body,
      {
        status: reply.status,
        headers: { ...(json && { "content-type": "application/json" }), ...reply.headers },
      },
    );
  });
  return {
    /** The receiver's origin, `http://127.0.0.1:<port>`. */
    url: `http://127.0.0.1:${server.addr.port}`,
    received,
    arrivedAt,
    /** The last request's body as JSON. */
    lastJson: () => JSON.parse(received[received.length - 1].body),
    close: () => server.shutdown(),
  };
}

/** Sends one message through a provider and the real sender, to loopback only. */
export function sendVia<F extends Fields>(
  provider: Provider<F>,
  settings: SettingsOf<F>,
  message: NotifyMessage,
  now = new Date("2030-01-01T00:00:00Z"),
): Promise<DeliveryResult> {
  const send = createSender({
    policy: createNetworkPolicy(["127.0.0.0/8"]),
    userAgent: "probe-service-test",
    timeoutMs: 5_000,
    now: () => now,
  });
  return send(provider, provider.request(settings, message, { now }));
}

/** Text a hostile probe or peer could write: markup, mentions and Markdown's punctuation. */
export const HOSTILE = '<b>bold</b> @everyone @channel <!here> @room *_[]`~ & "quoted"';

/** An alert event of `type` whose every free text is {@link HOSTILE}, for incident 42. */
export function hostileEvent(type: AlertEventType, incidentId: string | null = "42"): AlertEvent {
  const failing = type === "probe.down" || type === "probe.reminder";
  return {
    type,
    timestamp: "2030-01-01T00:00:00.000Z",
    data: {
      // A degraded probe has no incident (its recovery ends the spell); a test has none either.
      incident_id: type === "target.test" || type === "probe.degraded" ? null : incidentId,
      project: "shop",
      probe_id: "0123456789abcdef",
      label: `Checkout ${HOSTILE}`,
      url: "https://shop.example.com/health?token=****",
      link: type === "target.test"
        ? null
        : "https://probes.example.com/#/projects/shop/probes/0123456789abcdef",
      state: failing ? "down" : type === "probe.degraded" ? "degraded" : "up",
      cause: failing ? `answered HTTP 500, expected 200: ${HOSTILE}` : null,
      error: failing ? "HTTP 500" : null,
      http_status: failing ? 500 : null,
      failed_checks: null,
      started_at: "2029-12-31T23:55:00.000Z",
      resolved_at: type === "probe.recovered" ? "2030-01-01T00:00:00.000Z" : null,
      duration_seconds: type === "probe.recovered" ? 300 : null,
      runs_failed: failing ? 3 : null,
      locations: null,
    },
  };
}

/** An alert message of `type` (`msg_1` unless said). */
export const alertMessage = (type: AlertEventType, id = "msg_1"): NotifyMessage => ({
  type: "alert",
  id,
  event: hostileEvent(type),
});

/** What a send came to: delivered, retried (after a wait the vendor named), or given up. */
export const DELIVERED = { outcome: "delivered", attempts: 1 } as const;
export const retried = (error: string, retryAfterMs?: number) => ({
  outcome: "failed",
  attempts: 1,
  error,
  ...(retryAfterMs !== undefined && { retryAfterMs }),
});
export const gaveUp = (error: string) => ({ outcome: "failed", attempts: 1, error, final: true });

/** Sends `count` times, one after the other (one scripted reply each): the results in order. */
export async function sendEach(
  send: () => Promise<DeliveryResult>,
  count: number,
): Promise<DeliveryResult[]> {
  const results = [];
  for (let i = 0; i < count; i++) results.push(await send());
  return results;
}

/**
 * What each of a vendor's `replies` comes to: a receiver answers them in turn, `send` sends once
 * to its URL for each, and each result is said in words: `delivered`, `retry HTTP 503`,
 * `retry HTTP 429 after 2000 ms` (the vendor's wait), `give up HTTP 400`.
 */
export async function verdictsOn(
  send: (url: string) => Promise<DeliveryResult>,
  replies: VendorReply[],
): Promise<string[]> {
  const vendor = vendorReceiver(replies);
  try {
    const words = [];
    for (let i = 0; i < replies.length; i++) {
      const result = await send(vendor.url);
      if (result.outcome === "delivered") words.push("delivered");
      else {
        const wait = result.retryAfterMs === undefined ? "" : ` after ${result.retryAfterMs} ms`;
        words.push(result.final ? `give up ${result.error}` : `retry ${result.error}${wait}`);
      }
    }
    return words;
  } finally {
    await vendor.close();
  }
}

/** An alert message of `type` whose event's data has `data` in place of the hostile texts. */
export function alertWith(type: AlertEventType, data: Partial<AlertEvent["data"]>): NotifyMessage {
  const event = hostileEvent(type);
  return { type: "alert", id: "msg_1", event: { ...event, data: { ...event.data, ...data } } };
}
