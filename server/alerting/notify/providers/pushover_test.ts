import assert from "node:assert/strict";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { pushover, PUSHOVER_URL } from "./pushover.ts";

const { alertMessage, HOSTILE, sendVia, vendorReceiver, verdictsOn } = vendorTesting;

const TOKEN = "azGDORePK8gMaC0QOYAMyEEuzJnyUi";
const USER = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG";
const SENT = { status: 200, body: { status: 1, request: "647d2300-702c-4b38-8b2f-d56326ae460b" } };

Deno.test("pushover: a down is an emergency with retry and expire, with title and URL", async () => {
  const vendor = vendorReceiver([SENT]);
  try {
    const result = await sendVia(
      pushover,
      { token: TOKEN, user: USER, url: vendor.url },
      alertMessage("probe.down"),
    );
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    const [call] = vendor.received;
    assert.equal(call.method, "POST");
    assert.equal(call.path, "/1/messages.json");
    assert.equal(call.headers.get("content-type"), "application/x-www-form-urlencoded");
    const form = new URLSearchParams(call.body);
    assert.equal(form.get("token"), TOKEN);
    assert.equal(form.get("user"), USER);
    assert.equal(form.get("title"), `DOWN shop: Checkout ${HOSTILE}`);
    assert.equal(form.get("priority"), "2");
    assert.equal(form.get("retry"), "60");
    assert.equal(form.get("expire"), "3600");
    assert.equal(form.get("html"), null, "plain text: no markup read");
    assert.equal(
      form.get("url"),
      "https://probes.example.com/#/projects/shop/probes/0123456789abcdef",
    );
    assert.equal(form.get("url_title"), "Open in the dashboard");
    assert.equal(form.get("timestamp"), String(Date.parse("2030-01-01T00:00:00Z") / 1000));
    assert.ok(form.get("message")!.startsWith(`answered HTTP 500, expected 200: ${HOSTILE}`));
  } finally {
    await vendor.close();
  }
});

Deno.test("pushover: recovery normal, no retry; message cut to 1,024 and title to 250", async () => {
  const vendor = vendorReceiver([SENT]);
  try {
    const message = alertMessage("probe.recovered");
    if (message.type === "alert") {
      message.event.data.label = "l".repeat(1000);
      message.event.data.url = `https://x.example/${"u".repeat(2000)}`;
    }
    await sendVia(pushover, { token: TOKEN, user: USER, url: vendor.url }, message);
    const form = new URLSearchParams(vendor.received[0].body);
    assert.equal(form.get("priority"), "0");
    assert.equal(form.get("retry"), null);
    assert.equal(form.get("expire"), null);
    assert.equal(Array.from(form.get("message")!).length, 1024);
    assert.equal(Array.from(form.get("title")!).length, 250);
  } finally {
    await vendor.close();
  }
  assert.equal(pushover.fields.url.default, PUSHOVER_URL);
  assert.equal(PUSHOVER_URL, "https://api.pushover.net");
});

Deno.test("pushover: 429 and 5xx retried, 400 (status 0) gives up", async () => {
  const verdicts = await verdictsOn(
    (url) => sendVia(pushover, { token: TOKEN, user: USER, url }, alertMessage("probe.down")),
    [
      { status: 429 },
      { status: 500 },
      { status: 400, body: { user: "invalid", errors: ["user identifier is invalid"], status: 0 } },
    ],
  );
  assert.deepEqual(verdicts, ["retry HTTP 429", "retry HTTP 500", "give up HTTP 400"]);
});
