/**
 * An escalation step's notification says so in words on every kind: its subject names the step
 * (`DOWN (escalation step 2) shop: …`) and its details say why it came (`Escalation: step 2,
 * still down after 10 min and not acknowledged`); the webhook's JSON carries `escalation_step`.
 * A notification that is no escalation says nothing of the kind. Each kind's request is read as
 * its vendor receives it (JSON strings, form fields, headers, a mail's text).
 */
import assert from "node:assert/strict";
import type { AlertEvent } from "@probe/shared";
import { hostileEvent } from "../../../testing/vendor_receiver.ts";
import type { NotifyMessage, VendorRequest } from "../provider.ts";
import { PROVIDERS } from "./mod.ts";

/** Settings each kind takes, pointing nowhere: only the request is built. */
const SETTINGS: Record<(typeof PROVIDERS)[number]["kind"], Record<string, unknown>> = {
  webhook: { url: "http://127.0.0.1:9/hook" },
  slack: { url: "http://127.0.0.1:9/services/T/B/x" },
  discord: { url: "http://127.0.0.1:9/api/webhooks/1/x" },
  mail: { recipients: ["oncall@example.com"] },
  pagerduty: { routing_key: "R0123456789abcdef0123456789abcdef", url: "http://127.0.0.1:9" },
  opsgenie: { api_key: "eb243592-faa2-4ba2-a551q-1afdf565c889", url: "http://127.0.0.1:9" },
  teams: { url: "http://127.0.0.1:9/workflows/x" },
  google_chat: { url: "http://127.0.0.1:9/v1/spaces/x/messages?key=k&token=t" },
  mattermost: { url: "http://127.0.0.1:9/hooks/x" },
  matrix: { url: "http://127.0.0.1:9", access_token: "syt_x", room_id: "!abc:example.org" },
  telegram: { bot_token: "123:abc", chat_id: "-100123", url: "http://127.0.0.1:9" },
  ntfy: { url: "http://127.0.0.1:9/alerts" },
  pushover: {
    token: "azGDORePK8gMaC0QOYAMyEEuzJnyUi",
    user: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
    url: "http://127.0.0.1:9",
  },
  gotify: { url: "http://127.0.0.1:9", token: "AbCdEf123" },
  twilio_sms: {
    account_sid: "AC0123456789abcdef0123456789abcdef",
    auth_token: "secret",
    from: "+15557122661",
    to: "+15558675310",
    url: "http://127.0.0.1:9",
  },
};

/** Every text a request carries, as its receiver reads it, on one string. */
function readable(request: VendorRequest): string {
  if (request.transport === "mail") return `${request.subject}\n${request.text}`;
  const strings: string[] = Object.values(request.headers ?? {});
  const body = request.body ?? "";
  const type = request.headers?.["content-type"] ?? "application/json";
  if (type.startsWith("application/x-www-form-urlencoded")) {
    strings.push(...new URLSearchParams(body).values());
  } else if (type.startsWith("application/json")) {
    JSON.stringify(JSON.parse(body), (_key, value) => {
      if (typeof value === "string") strings.push(value);
      return value;
    });
  } else strings.push(body);
  // Markup, entities and Markdown's escapes a kind wraps texts in are not what a person reads.
  return strings.join("\n").replace(/<[^>]*>|\*\*/g, "").replace(/\\(\W)/g, "$1")
    .replaceAll("&amp;", "&");
}

/** A `probe.down` ten minutes into its incident; an escalation step's when `step` is given. */
function downMessage(step?: number): NotifyMessage {
  const event: AlertEvent = hostileEvent("probe.down");
  event.timestamp = "2030-01-01T00:05:00.000Z";
  if (step !== undefined) event.data.escalation_step = step;
  return { type: "alert", id: "msg_1", event };
}

const now = new Date("2030-01-01T00:05:00Z");
const request = (kind: string, message: NotifyMessage) => {
  const provider = PROVIDERS.find((p) => p.kind === kind)!;
  return provider.request(SETTINGS[kind as keyof typeof SETTINGS] as never, message, { now });
};

for (const { kind } of PROVIDERS) {
  Deno.test(`${kind}: an escalation step's message says the step in words`, () => {
    const text = readable(request(kind, downMessage(2)));
    if (kind === "webhook") {
      // The event itself, for machines: the step as a number.
      const sent = request(kind, downMessage(2));
      assert.equal(sent.transport === "http" && JSON.parse(sent.body!).data.escalation_step, 2);
      return;
    }
    assert.match(text, /DOWN \(escalation step 2\) shop: Checkout/);
    // One SMS segment holds the subject alone; every other kind has room for why.
    if (kind !== "twilio_sms") {
      assert.match(text, /step 2, still down after 10 min and not acknowledged/);
    }
    const plain = readable(request(kind, downMessage()));
    assert.doesNotMatch(plain, /escalation|not acknowledged/i);
    assert.match(plain, /DOWN shop: Checkout/);
  });
}
