import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Webhook } from "standardwebhooks";
import { closedPort, TEST_TLS_CERT, TEST_TLS_KEY, webhookReceiver } from "../testing/receivers.ts";
import { postWebhook, type WebhookOptions } from "./webhook.ts";

const SECRET = "whsec-0123456789abcdef";
const receiver = (statuses: number[], opts: { hang?: Promise<void> } = {}) =>
  webhookReceiver(statuses, { secret: SECRET, ...opts });

/** Options that make retries instant and note each backoff asked for. */
function fastRetries(waits: number[]): WebhookOptions {
  return {
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    now: () => new Date("2030-01-01T00:00:00Z"),
  };
}

const BODY = JSON.stringify({ type: "iam_alive", sequence: 7 });

Deno.test("webhook: 503, 503, then 200 is three attempts and one delivery, each signed", async () => {
  const target = await receiver([503, 503, 200]);
  try {
    const waits: number[] = [];
    const result = await postWebhook(
      { url: target.url, secret: SECRET, body: BODY, idempotencyKey: "7" },
      fastRetries(waits),
    );
    assert.deepEqual(result, { outcome: "delivered", attempts: 3 });
    assert.equal(target.received.length, 3);
    assert.deepEqual(waits, [1000, 2000], "exponential backoff between attempts");
    for (const r of target.received) {
      assert.equal(r.signatureValid, true);
      assert.equal(r.body, BODY);
      assert.equal(r.headers.get("idempotency-key"), "7");
      assert.equal(r.headers.get("x-timestamp"), String(Date.parse("2030-01-01T00:00:00Z") / 1000));
      assert.equal(r.headers.get("content-type"), "application/json");
    }
  } finally {
    await target.close();
  }
});

Deno.test("webhook: a 400 is final after one attempt", async () => {
  const target = await receiver([400]);
  try {
    const waits: number[] = [];
    const result = await postWebhook(
      { url: target.url, secret: SECRET, body: BODY, idempotencyKey: "8" },
      fastRetries(waits),
    );
    assert.deepEqual(result, { outcome: "failed", attempts: 1, error: "HTTP 400" });
    assert.equal(target.received.length, 1);
    assert.deepEqual(waits, []);
  } finally {
    await target.close();
  }
});

Deno.test("webhook: five 5xx answers give up after five attempts", async () => {
  const target = await receiver([500]);
  try {
    const waits: number[] = [];
    const result = await postWebhook(
      { url: target.url, secret: SECRET, body: BODY, idempotencyKey: "9" },
      fastRetries(waits),
    );
    assert.equal(result.outcome, "failed");
    assert.equal(result.attempts, 5);
    assert.equal(result.error, "gave up after 5 attempts; last: HTTP 500");
    assert.equal(target.received.length, 5);
    assert.deepEqual(waits, [1000, 2000, 4000, 8000]);
  } finally {
    await target.close();
  }
});

Deno.test("webhook: network errors are retried and reported without the URL", async () => {
  const port = closedPort();
  const result = await postWebhook(
    { url: `http://127.0.0.1:${port}/hook?token=tok-secret`, body: BODY, idempotencyKey: "1" },
    { ...fastRetries([]), maxAttempts: 2 },
  );
  assert.equal(result.outcome, "failed");
  assert.equal(result.attempts, 2);
  assert.equal(result.error, "gave up after 2 attempts; last: network error: connection refused");
});

/** A peer that answers every connection with the given bytes, then hangs up. */
function rawPeer(reply: string) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of listener) {
      (async () => {
        await conn.read(new Uint8Array(65536)).catch(() => null);
        await conn.write(new TextEncoder().encode(reply)).catch(() => 0);
        conn.close();
      })();
    }
  })().catch(() => {});
  return { port: (listener.addr as Deno.NetAddr).port, close: () => listener.close() };
}

Deno.test("webhook: what a hostile peer sends is summarised, never copied", async () => {
  const secret = "c2VjcmV0LXRva2Vu";
  const replies: [string, string][] = [
    [`${secret} not HTTP at all\r\n\r\n`, "network error: invalid HTTP response"],
    [`HTTP/1.1 200 OK\r\nX-${secret}\u0001: a\r\n\r\n`, "network error: invalid HTTP response"],
    ["", "network error: connection closed"],
    [`HTTP/1.1 503 ${secret}\r\ncontent-length: 6\r\n\r\n${secret.slice(0, 6)}`, "HTTP 503"],
  ];
  for (const [reply, summary] of replies) {
    const peer = rawPeer(reply);
    try {
      const result = await postWebhook(
        {
          url: `http://127.0.0.1:${peer.port}/hook?token=tok-secret`,
          body: BODY,
          idempotencyKey: "11",
        },
        { ...fastRetries([]), maxAttempts: 1 },
      );
      assert.equal(
        result.error,
        `gave up after 1 attempt; last: ${summary}`,
        JSON.stringify(reply),
      );
    } finally {
      peer.close();
    }
  }
});

Deno.test("webhook: a certificate the client does not trust is a TLS summary", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: TEST_TLS_CERT, key: TEST_TLS_KEY, onListen() {} },
    () => new Response("ok"),
  );
  try {
    const result = await postWebhook(
      {
        url: `https://localhost:${server.addr.port}/hook?token=tok-secret`,
        body: BODY,
        idempotencyKey: "12",
      },
      { ...fastRetries([]), maxAttempts: 1 },
    );
    assert.equal(result.error, "gave up after 1 attempt; last: tls: certificate not trusted");
  } finally {
    await server.shutdown();
  }
});

Deno.test("webhook: an attempt that takes longer than the timeout is abandoned and retried", async () => {
  let release!: () => void;
  const hang = new Promise<void>((r) => release = r);
  const target = await receiver([200], { hang });
  try {
    const result = await postWebhook(
      { url: target.url, secret: SECRET, body: BODY, idempotencyKey: "2" },
      { ...fastRetries([]), maxAttempts: 2, timeoutMs: 100 },
    );
    assert.equal(result.outcome, "failed");
    assert.equal(result.attempts, 2);
    assert.equal(result.error, "gave up after 2 attempts; last: timed out after 100 ms");
    assert.equal(target.received.length, 2);
  } finally {
    release();
    await target.close();
  }
});

Deno.test("webhook: a redirect is not followed", async () => {
  const target = await receiver([302]);
  try {
    const result = await postWebhook(
      { url: target.url, body: BODY, idempotencyKey: "3" },
      fastRetries([]),
    );
    assert.deepEqual(result, {
      outcome: "failed",
      attempts: 1,
      error: "HTTP 302 (redirects are not followed)",
    });
    assert.equal(target.received.length, 1);
  } finally {
    await target.close();
  }
});

Deno.test("webhook: without a secret the body goes unsigned", async () => {
  const target = await receiver([204]);
  try {
    const result = await postWebhook(
      { url: target.url, body: BODY, idempotencyKey: "4" },
      fastRetries([]),
    );
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    assert.equal(target.received[0].headers.has("x-signature"), false);
    assert.equal(target.received[0].headers.has("webhook-signature"), false);
    assert.equal(target.received[0].headers.get("idempotency-key"), "4");
  } finally {
    await target.close();
  }
});

Deno.test("webhook: a URL the outbound policy refuses is never called", async () => {
  const target = await receiver([200]);
  try {
    const asked: string[] = [];
    const result = await postWebhook(
      { url: target.url, secret: SECRET, body: BODY, idempotencyKey: "5" },
      {
        ...fastRetries([]),
        checkOutboundUrl: (url) => {
          asked.push(url.hostname);
          return Promise.resolve({ allowed: false, reason: "loopback addresses are blocked" });
        },
      },
    );
    assert.deepEqual(result, {
      outcome: "failed",
      attempts: 0,
      error: "blocked by the outbound network policy: loopback addresses are blocked",
    });
    assert.deepEqual(asked, ["127.0.0.1"]);
    assert.equal(target.received.length, 0);
  } finally {
    await target.close();
  }
});

Deno.test("webhook: a URL the outbound policy allows is called", async () => {
  const target = await receiver([200]);
  try {
    const result = await postWebhook(
      { url: target.url, secret: SECRET, body: BODY, idempotencyKey: "6" },
      { ...fastRetries([]), checkOutboundUrl: () => Promise.resolve({ allowed: true }) },
    );
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
  } finally {
    await target.close();
  }
});

Deno.test("webhook: stopping during the backoff ends the retries", async () => {
  const target = await receiver([503]);
  try {
    const stop = new AbortController();
    const result = await postWebhook(
      { url: target.url, secret: SECRET, body: BODY, idempotencyKey: "10" },
      {
        signal: stop.signal,
        sleep: () => {
          stop.abort();
          return Promise.resolve();
        },
      },
    );
    assert.equal(result.outcome, "failed");
    assert.equal(result.attempts, 1);
    assert.equal(result.error, "stopped; HTTP 503");
    assert.equal(target.received.length, 1);
  } finally {
    await target.close();
  }
});

Deno.test("webhook: the body is signed per Standard Webhooks too, keyed with the secret's UTF-8 bytes", async () => {
  // Not ASCII: the key is the UTF-8 of the text, not one byte per UTF-16 unit.
  const secret = "clé secrète – 0123456789";
  const target = webhookReceiver([503, 200], { secret });
  try {
    const result = await postWebhook(
      { url: target.url, secret, body: BODY, idempotencyKey: "42" },
      { sleep: () => Promise.resolve() },
    );
    assert.deepEqual(result, { outcome: "delivered", attempts: 2 });
    // A receiver's Standard Webhooks library, given `whsec_` + base64 of those bytes.
    const receiver = new Webhook(`whsec_${Buffer.from(secret, "utf8").toString("base64")}`);
    for (const { headers, body, signatureValid } of target.received) {
      assert.equal(signatureValid, true, "X-Signature is still there for existing receivers");
      assert.equal(headers.get("webhook-id"), "42", "the idempotency key, on every attempt");
      assert.equal(headers.get("webhook-timestamp"), headers.get("x-timestamp"));
      assert.deepEqual(receiver.verify(body, Object.fromEntries(headers)), JSON.parse(BODY));
      assert.throws(
        () =>
          new Webhook(`whsec_${btoa(secret.replace(/\P{ASCII}/gu, "?"))}`)
            .verify(body, Object.fromEntries(headers)),
        /No matching signature/,
      );
    }
  } finally {
    await target.close();
  }
});
