import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { ntfy } from "./ntfy.ts";

const { alertMessage, HOSTILE, sendVia, vendorReceiver, verdictsOn } = vendorTesting;

const PUBLISHED = {
  status: 200,
  body: { id: "sPs71M8A2T", event: "message", topic: "shop-alerts" },
};

Deno.test("ntfy: published to the topic URL with title, urgent priority, tags, click and token", async () => {
  const vendor = vendorReceiver([PUBLISHED]);
  try {
    const settings = {
      url: `${vendor.url}/shop-alerts`,
      token: "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2",
    };
    const result = await sendVia(ntfy, settings, alertMessage("probe.down"));
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    const [call] = vendor.received;
    assert.equal(call.method, "POST");
    assert.equal(call.path, "/shop-alerts");
    const h = call.headers;
    assert.equal(h.get("content-type"), "text/plain; charset=utf-8");
    assert.equal(h.get("title"), `DOWN shop: Checkout ${HOSTILE}`);
    assert.equal(h.get("priority"), "urgent");
    assert.equal(h.get("tags"), "rotating_light,shop");
    assert.equal(
      h.get("click"),
      "https://probes.example.com/#/projects/shop/probes/0123456789abcdef",
    );
    assert.equal(h.get("authorization"), "Bearer tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2");
    assert.equal(h.get("markdown"), null, "plain text: ntfy reads no markup in it");
    assert.ok(call.body.startsWith(`answered HTTP 500, expected 200: ${HOSTILE}\nProject: shop\n`));
  } finally {
    await vendor.close();
  }
});

Deno.test("ntfy: a title not in ASCII is RFC 2047-encoded, a long body cut to 4,096 bytes", async () => {
  const vendor = vendorReceiver([PUBLISHED]);
  try {
    const message = alertMessage("probe.recovered");
    if (message.type === "alert") {
      message.event.data.label = "Caisse — paiement ✓\r\nX-Injected: 1";
      message.event.data.url = `https://x.example/${"é".repeat(5000)}`;
    }
    await sendVia(ntfy, { url: `${vendor.url}/t` }, message);
    const [call] = vendor.received;
    const title = call.headers.get("title") ?? "";
    const match = /^=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=$/.exec(title);
    assert.ok(match, title);
    assert.equal(
      Buffer.from(match[1], "base64").toString("utf8"),
      "RECOVERED shop: Caisse — paiement ✓ X-Injected: 1",
    );
    assert.equal(call.headers.get("x-injected"), null);
    assert.equal(call.headers.get("priority"), "default");
    assert.equal(call.headers.get("tags"), "white_check_mark,shop");
    assert.equal(call.headers.get("authorization"), null, "no token, no header");
    assert.ok(new TextEncoder().encode(call.body).length <= 4096);
  } finally {
    await vendor.close();
  }
});

Deno.test("ntfy: 429 and 5xx are retried, 401 and 413 give up", async () => {
  const verdicts = await verdictsOn(
    (url) => sendVia(ntfy, { url: `${url}/t` }, alertMessage("probe.down")),
    [
      { status: 429, body: { code: 42901, http: 429, error: "limit reached: too many requests" } },
      { status: 502 },
      { status: 401, body: { code: 40101, http: 401, error: "unauthorized" } },
      { status: 413, body: { code: 41301, http: 413, error: "too large" } },
    ],
  );
  assert.deepEqual(verdicts, [
    "retry HTTP 429",
    "retry HTTP 502",
    "give up HTTP 401",
    "give up HTTP 413",
  ]);
  assert.equal("required" in ntfy.fields.token, false, "the token is optional");
  assert.equal(ntfy.fields.url.secret?.mask("https://ntfy.sh/secret-topic"), "https://ntfy.sh/…");
});
