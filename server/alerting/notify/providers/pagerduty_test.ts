import assert from "node:assert/strict";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { pagerduty, PAGERDUTY_EVENTS_URL } from "./pagerduty.ts";

const { alertMessage, HOSTILE, retried, sendEach, sendVia, vendorReceiver } = vendorTesting;

const ROUTING_KEY = "R0ut1ngK3yR0ut1ngK3yR0ut1ngK3y01";
const ACCEPTED = { status: 202, body: { status: "success", message: "Event processed" } };

Deno.test("pagerduty: trigger, acknowledge and resolve of one incident share its dedup_key", async () => {
  const vendor = vendorReceiver([ACCEPTED]);
  try {
    const url = `${vendor.url}/v2/enqueue`;
    for (const type of ["probe.down", "probe.acknowledged", "probe.recovered"] as const) {
      const result = await sendVia(
        pagerduty,
        { routing_key: ROUTING_KEY, url },
        alertMessage(type),
      );
      assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    }
    const [trigger, ack, resolve] = vendor.received.map((r) => JSON.parse(r.body));
    for (const call of vendor.received) {
      assert.equal(call.method, "POST");
      assert.equal(call.path, "/v2/enqueue");
      assert.equal(call.headers.get("content-type"), "application/json");
    }
    assert.equal(trigger.event_action, "trigger");
    assert.equal(ack.event_action, "acknowledge");
    assert.equal(resolve.event_action, "resolve");
    assert.equal(trigger.routing_key, ROUTING_KEY);
    assert.equal(trigger.dedup_key, "probe-service:shop:0123456789abcdef:incident:42");
    assert.equal(ack.dedup_key, trigger.dedup_key);
    assert.equal(resolve.dedup_key, trigger.dedup_key);
    assert.equal(resolve.payload, undefined, "a resolve carries the key only");
    const p = trigger.payload;
    assert.equal(p.severity, "critical");
    // The Events API has no markup: the label arrives as written, nothing escaped or dropped.
    assert.equal(p.summary, `DOWN shop: Checkout ${HOSTILE}`);
    assert.equal(p.source, "https://shop.example.com/health?token=****");
    assert.equal(p.timestamp, "2030-01-01T00:00:00.000Z");
    assert.equal(p.group, "shop");
    assert.equal(p.custom_details.Cause, `answered HTTP 500, expected 200: ${HOSTILE}`);
    assert.equal(p.custom_details["Runs failed"], "3");
    assert.deepEqual(trigger.links, [{
      href: "https://probes.example.com/#/projects/shop/probes/0123456789abcdef",
      text: "Open in the dashboard",
    }]);
  } finally {
    await vendor.close();
  }
});

Deno.test("pagerduty: the summary is cut to 1,024 characters; degraded is a warning, a test info", async () => {
  const vendor = vendorReceiver([ACCEPTED]);
  try {
    const url = `${vendor.url}/v2/enqueue`;
    const long = alertMessage("probe.degraded");
    if (long.type === "alert") long.event.data.label = "é".repeat(3000);
    await sendVia(pagerduty, { routing_key: ROUTING_KEY, url }, long);
    const degraded = vendor.lastJson();
    assert.equal(Array.from(degraded.payload.summary as string).length, 1024);
    assert.ok(degraded.payload.summary.endsWith("…"));
    assert.equal(degraded.payload.severity, "warning");
    assert.equal(degraded.dedup_key, "probe-service:shop:0123456789abcdef:degraded");

    await sendVia(
      pagerduty,
      { routing_key: ROUTING_KEY, url },
      alertMessage("target.test", "msg_t"),
    );
    const test = vendor.lastJson();
    assert.equal(test.event_action, "trigger");
    assert.equal(test.payload.severity, "info");
    assert.equal(test.dedup_key, "probe-service:test:msg_t");
  } finally {
    await vendor.close();
  }
});

Deno.test("pagerduty: 429 and 5xx are retried (Retry-After honoured), 400 (a bad key) gives up", async () => {
  const vendor = vendorReceiver([
    { status: 429, headers: { "retry-after": "30" }, body: { status: "throttle" } },
    { status: 503, body: "" },
    { status: 400, body: { status: "invalid event", message: "Event object is invalid" } },
  ]);
  try {
    const send = () =>
      sendVia(
        pagerduty,
        { routing_key: ROUTING_KEY, url: `${vendor.url}/v2/enqueue` },
        alertMessage("probe.down"),
      );
    assert.deepEqual(await sendEach(send, 2), [retried("HTTP 429", 30_000), retried("HTTP 503")]);
    const refused = await send();
    assert.deepEqual(refused, { outcome: "failed", attempts: 1, error: "HTTP 400", final: true });
    assert.ok(!JSON.stringify(refused).includes(ROUTING_KEY));
  } finally {
    await vendor.close();
  }
});

Deno.test("pagerduty: the URL defaults to the Events API v2 and the key is masked", () => {
  assert.equal(pagerduty.fields.url.default, "https://events.pagerduty.com/v2/enqueue");
  assert.equal(PAGERDUTY_EVENTS_URL, pagerduty.fields.url.default);
  const request = pagerduty.request({ routing_key: ROUTING_KEY }, alertMessage("probe.down"), {
    now: new Date(),
  });
  assert.equal(request.transport === "http" && request.url, PAGERDUTY_EVENTS_URL);
  assert.equal(pagerduty.fields.routing_key.secret?.mask(ROUTING_KEY), "…3y01");
});
