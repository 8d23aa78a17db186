/**
 * Signing per the Standard Webhooks specification (https://www.standardwebhooks.com): three
 * headers, `webhook-id` (the message's id, the same on every attempt, so receivers can drop
 * repeats), `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature`
 * (`v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`), made as the
 * `standardwebhooks` package makes them (its tests verify them with it), so any receiver using
 * one of its libraries verifies them as they are.
 *
 * @module
 */
import { createHmac } from "node:crypto";

export const WEBHOOK_ID_HEADER = "webhook-id";
export const WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp";
export const WEBHOOK_SIGNATURE_HEADER = "webhook-signature";

/**
 * The key a message is signed with: a Standard Webhooks key (`whsec_` and base64), or raw bytes
 * (the I'm alive webhook's free-text secret, as UTF-8).
 */
export type SigningKey = string | Uint8Array;

/** The three headers of one signed attempt. */
export interface StandardWebhookHeaders {
  [WEBHOOK_ID_HEADER]: string;
  [WEBHOOK_TIMESTAMP_HEADER]: string;
  [WEBHOOK_SIGNATURE_HEADER]: string;
}

/**
 * The Standard Webhooks headers of one attempt to send `body` (the exact bytes sent, as text)
 * with message id `id` at `timestamp`.
 *
 * @example
 * ```ts
 * import { signStandardWebhook } from "./standard_webhooks.ts";
 * const headers = signStandardWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", {
 *   id: "msg_1",
 *   timestamp: new Date(),
 *   body: '{"type":"target.test"}',
 * });
 * // headers["webhook-signature"] starts with "v1,"
 * ```
 */
export function signStandardWebhook(
  key: SigningKey,
  { id, timestamp, body }: { id: string; timestamp: Date; body: string },
): StandardWebhookHeaders {
  const seconds = String(Math.floor(timestamp.getTime() / 1000));
  // The package's own signing hashes in JavaScript (about 0.1 ms a message); node:crypto's HMAC
  // is native and gives the same bytes (its verify is the test).
  const signature = createHmac("sha256", keyBytes(key))
    .update(`${id}.${seconds}.${body}`).digest("base64");
  return {
    [WEBHOOK_ID_HEADER]: id,
    [WEBHOOK_TIMESTAMP_HEADER]: seconds,
    [WEBHOOK_SIGNATURE_HEADER]: `v1,${signature}`,
  };
}

/** A key's bytes, as the package reads them: `whsec_` (optional) and base64, or raw bytes. */
function keyBytes(key: SigningKey): Uint8Array {
  const bytes = typeof key === "string"
    ? Uint8Array.from(
      atob(key.startsWith(WHSEC) ? key.slice(WHSEC.length) : key),
      (c) => c.charCodeAt(0),
    )
    : key;
  if (bytes.byteLength === 0) throw new Error("Secret can't be empty.");
  return bytes;
}

const WHSEC = "whsec_";

/**
 * A free-text secret (the I'm alive webhook's `IAM_ALIVE_WEBHOOK_SECRET`) as a signing key: its
 * UTF-8 bytes. Receivers may use it as the Standard Webhooks key `whsec_` + base64 of those
 * bytes (`textKeyAsWhsec`).
 */
export function textKey(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/** The `whsec_` form of a free-text secret's key, for receivers' Standard Webhooks libraries. */
export function textKeyAsWhsec(secret: string): string {
  const bytes = textKey(secret);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `whsec_${btoa(binary)}`;
}

export const LEGACY_TIMESTAMP_HEADER = "x-timestamp";
export const LEGACY_SIGNATURE_HEADER = "x-signature";

/**
 * The service's own signature, kept for the I'm alive webhook's receivers: `sha256=` and the hex
 * HMAC-SHA256, keyed with the secret, of `<timestamp>.<body>` (the `X-Timestamp` header).
 */
export function legacySignature(key: Uint8Array, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", key).update(`${timestamp}.${body}`).digest("hex")}`;
}

/**
 * The headers that sign one attempt of a request (the one signing path of every notification):
 * Standard Webhooks with a key; with `legacy`, `X-Timestamp` always and `X-Signature` with a key.
 * Without a key nothing is signed.
 */
export function signingHeaders(
  { id, key, legacy }: { id: string; key: SigningKey | null; legacy?: boolean },
  body: string,
  at: Date,
): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const headers: Record<string, string> = legacy ? { [LEGACY_TIMESTAMP_HEADER]: timestamp } : {};
  if (key === null) return headers;
  // Whole seconds, as the header says: the signature covers exactly what is sent.
  Object.assign(
    headers,
    signStandardWebhook(key, { id, timestamp: new Date(Number(timestamp) * 1000), body }),
  );
  if (legacy) {
    const bytes = typeof key === "string" ? new TextEncoder().encode(key) : key;
    headers[LEGACY_SIGNATURE_HEADER] = legacySignature(bytes, timestamp, body);
  }
  return headers;
}
