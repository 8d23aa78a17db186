/**
 * `webhook`: the event (or the I'm alive report) as JSON, signed per Standard Webhooks with the
 * target's `whsec_` key. The I'm alive webhook is signed with its free-text secret's bytes and
 * carries the service's own `X-Timestamp`/`X-Signature` and `Idempotency-Key` too, and the
 * report's sequence as its id.
 *
 * @module
 */
import {
  hasUrlCredentials,
  MASKED_WEBHOOK_SECRET,
  WEBHOOK_URL_CREDENTIALS_MESSAGE,
  webhookSecret,
} from "@probe/shared";
import { Buffer } from "node:buffer";
import { defineProvider, postJson } from "../provider.ts";
import { textKey } from "../standard_webhooks.ts";
import { shownUrl } from "./fields.ts";

/** Bytes of a generated signing key: 32, within the 24 to 64 Standard Webhooks allows. */
const GENERATED_SECRET_BYTES = 32;

/** A new Standard Webhooks signing key: `whsec_` and the base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(GENERATED_SECRET_BYTES));
  return `whsec_${Buffer.from(bytes).toString("base64")}`;
}

export const webhook = defineProvider({
  kind: "webhook",
  label: "Webhook",
  description: "The event as signed JSON (Standard Webhooks)",
  fields: {
    url: shownUrl(
      "URL",
      "An http:// or https:// address that receives a POST of each event. No user name or " +
        "password in it.",
    ),
    secret: {
      schema: webhookSecret,
      secret: { mask: () => MASKED_WEBHOOK_SECRET },
      generate: generateWebhookSecret,
      form: {
        label: "Signing key (whsec_…)",
        input: "secret",
        help: "A Standard Webhooks key: whsec_ and base64 of 24 to 64 bytes. Optional: leave " +
          "empty and the service makes one, shown to you once.",
      },
    },
  },
  // A webhook's URL is shown on reads, so it may not carry credentials.
  check: ({ url }) =>
    url !== undefined && hasUrlCredentials(url)
      ? [{ path: "url", message: WEBHOOK_URL_CREDENTIALS_MESSAGE }]
      : [],
  request: ({ url, secret }, message) => {
    if (message.type === "iam_alive") {
      return postJson(url, message.report, {
        // The sequence: the same key on every attempt, as receivers written before the outbox expect.
        headers: { "idempotency-key": message.id },
        sign: { id: message.id, key: secret ? textKey(secret) : null, legacy: true },
      });
    }
    return postJson(url, message.event, { sign: { id: message.id, key: secret ?? null } });
  },
});
