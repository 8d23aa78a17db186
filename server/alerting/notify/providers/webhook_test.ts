import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { AlertEvent, IamAliveReport } from "@probe/shared";
import { Webhook } from "standardwebhooks";
import { createNetworkPolicy } from "../../../base/outbound/network_policy.ts";
import { webhookReceiver } from "../../../testing/receivers.ts";
import { createSender } from "../sender.ts";
import { textKeyAsWhsec } from "../standard_webhooks.ts";
import { testEvent } from "../targets.ts";
import { webhook } from "./webhook.ts";

const AT = new Date("2030-01-01T00:00:00Z");
const send = createSender({
  policy: createNetworkPolicy(["127.0.0.0/8"]),
  userAgent: "probe-service/test (I'm alive)",
  now: () => AT,
});
const REPORT: IamAliveReport = {
  type: "iam_alive",
  sequence: 7,
  trigger: "schedule",
  time: AT.toISOString(),
  since: null,
  version: "0.1.0",
  instance_id: "i-1",
  uptime_seconds: 60,
  interval_hours: 24,
  counts: { projects: 1, probes: 2 },
};
const SECRET = "iam-alive-secret-0123456789";
const KEY = `whsec_${Buffer.from("k".repeat(32)).toString("base64")}`;
const headersOf = (headers: Headers) => Object.fromEntries(headers);
const report = { type: "iam_alive" as const, id: "7", report: REPORT };

Deno.test("webhook provider: an I'm alive report carries both signatures, the stamp and its sequence as key", async () => {
  const hook = webhookReceiver([200], { secret: SECRET });
  try {
    const now = new Date();
    const sendNow = createSender({
      policy: createNetworkPolicy(["127.0.0.0/8"]),
      userAgent: "probe-service/test (I'm alive)",
      now: () => now,
    });
    const request = webhook.request({ url: hook.url, secret: SECRET }, report, { now });
    assert.deepEqual(await sendNow(webhook, request), { outcome: "delivered", attempts: 1 });
    const [{ headers, body, signatureValid }] = hook.received;
    assert.deepEqual(JSON.parse(body), REPORT);
    assert.equal(signatureValid, true, "X-Signature over <X-Timestamp>.<body>");
    assert.equal(headers.get("x-timestamp"), String(Math.floor(now.getTime() / 1000)));
    assert.equal(headers.get("idempotency-key"), "7");
    assert.equal(headers.get("webhook-id"), "7");
    assert.equal(headers.get("webhook-timestamp"), headers.get("x-timestamp"));
    assert.equal(headers.get("user-agent"), "probe-service/test (I'm alive)");
    assert.equal(headers.get("content-type"), "application/json");
    // Standard Webhooks, keyed with the free-text secret's UTF-8 bytes.
    assert.deepEqual(new Webhook(textKeyAsWhsec(SECRET)).verify(body, headersOf(headers)), REPORT);
    assert.throws(
      () => new Webhook(KEY).verify(body, headersOf(headers)),
      /No matching signature/,
    );
  } finally {
    await hook.close();
  }
});

Deno.test("webhook provider: without a secret a report goes unsigned, stamped and keyed", async () => {
  const hook = webhookReceiver([204]);
  try {
    const request = webhook.request({ url: hook.url }, report, { now: AT });
    assert.deepEqual(await send(webhook, request), { outcome: "delivered", attempts: 1 });
    const [{ headers }] = hook.received;
    assert.equal(headers.get("x-timestamp"), String(AT.getTime() / 1000));
    assert.equal(headers.get("idempotency-key"), "7");
    for (const name of ["x-signature", "webhook-id", "webhook-signature", "webhook-timestamp"]) {
      assert.equal(headers.has(name), false, name);
    }
  } finally {
    await hook.close();
  }
});

Deno.test("webhook provider: an alert event is signed with the target's whsec_ key, and only so", async () => {
  const hook = webhookReceiver([200]);
  const now = new Date();
  const sendNow = createSender({
    policy: createNetworkPolicy(["127.0.0.0/8"]),
    userAgent: "probe-service/test (alerts)",
  });
  try {
    const event: AlertEvent = testEvent("ops", now);
    const request = webhook.request(
      { url: hook.url, secret: KEY },
      { type: "alert", id: "msg_1", event },
      { now },
    );
    assert.deepEqual(await sendNow(webhook, request), { outcome: "delivered", attempts: 1 });
    const [{ headers, body }] = hook.received;
    assert.deepEqual(new Webhook(KEY).verify(body, headersOf(headers)), event);
    assert.equal(headers.get("webhook-id"), "msg_1");
    for (const name of ["x-signature", "x-timestamp", "idempotency-key"]) {
      assert.equal(headers.has(name), false, name);
    }
  } finally {
    await hook.close();
  }
});

Deno.test("webhook provider: 5xx and 429 are retried (Retry-After honoured), a redirect too, another 4xx given up", async () => {
  const answers = [
    new Response("no", { status: 503 }),
    new Response("slow down", { status: 429, headers: { "retry-after": "7" } }),
    new Response(null, { status: 302, headers: { location: "http://127.0.0.1:9/" } }),
    new Response("bad request: tok-secret", { status: 400 }),
  ];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => answers.shift()!,
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}/hook?token=tok-secret`;
    const attempt = () => send(webhook, webhook.request({ url }, report, { now: AT }));
    assert.deepEqual(await attempt(), { outcome: "failed", attempts: 1, error: "HTTP 503" });
    assert.deepEqual(await attempt(), {
      outcome: "failed",
      attempts: 1,
      error: "HTTP 429",
      retryAfterMs: 7000,
    });
    assert.deepEqual(await attempt(), {
      outcome: "failed",
      attempts: 1,
      error: "redirect not followed",
    });
    assert.deepEqual(await attempt(), {
      outcome: "failed",
      attempts: 1,
      error: "HTTP 400",
      final: true,
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("webhook provider: a URL holding credentials is refused (it is shown on reads)", () => {
  assert.deepEqual(webhook.check!({ url: "https://u:p@example.com/h" }), [{
    path: "url",
    message: "must not hold a user name or password (the signature authenticates the service)",
  }]);
  assert.deepEqual(webhook.check!({ url: "https://example.com/h" }), []);
});
