import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { signStandardWebhook, textKey, textKeyAsWhsec } from "./standard_webhooks.ts";

const KEY_BYTES = Buffer.from("0123456789abcdef0123456789abcdef");
const KEY = `whsec_${KEY_BYTES.toString("base64")}`;
const BODY = '{"type":"probe.down","timestamp":"2026-11-22T12:00:00.000Z","data":{}}';

Deno.test("standard webhooks: the signature is v1 and the HMAC of id.timestamp.body", () => {
  const timestamp = new Date("2026-11-22T12:00:00.900Z");
  const headers = signStandardWebhook(KEY, { id: "msg_1", timestamp, body: BODY });
  // The specification's formula, computed here without the package.
  const expected = createHmac("sha256", KEY_BYTES)
    .update(`msg_1.${Math.floor(timestamp.getTime() / 1000)}.${BODY}`)
    .digest("base64");
  assert.deepEqual(headers, {
    "webhook-id": "msg_1",
    "webhook-timestamp": "1795348800",
    "webhook-signature": `v1,${expected}`,
  });
});

Deno.test("standard webhooks: the package's verify accepts what is signed, and nothing altered", () => {
  const headers = signStandardWebhook(KEY, { id: "msg_2", timestamp: new Date(), body: BODY });
  const receiver = new Webhook(KEY);
  assert.deepEqual(receiver.verify(BODY, { ...headers }), JSON.parse(BODY));
  assert.throws(() => receiver.verify(BODY + " ", { ...headers }), /No matching signature/);
  assert.throws(
    () => receiver.verify(BODY, { ...headers, "webhook-id": "msg_3" }),
    /No matching signature/,
  );
  const stale = signStandardWebhook(KEY, {
    id: "msg_2",
    timestamp: new Date(Date.now() - 3600_000),
    body: BODY,
  });
  assert.throws(() => receiver.verify(BODY, { ...stale }), /too old/);
});

Deno.test("standard webhooks: a free-text secret signs with its UTF-8 bytes, the same as its whsec_ form", () => {
  const secret = "ünïcode secret text 0123";
  const timestamp = new Date();
  const raw = signStandardWebhook(textKey(secret), { id: "7", timestamp, body: BODY });
  const whsec = textKeyAsWhsec(secret);
  assert.equal(whsec, `whsec_${Buffer.from(secret, "utf8").toString("base64")}`);
  assert.deepEqual(signStandardWebhook(whsec, { id: "7", timestamp, body: BODY }), raw);
  assert.deepEqual(new Webhook(whsec).verify(BODY, { ...raw }), JSON.parse(BODY));
});
