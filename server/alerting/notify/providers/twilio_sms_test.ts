import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { oneSegment, TWILIO_URL, twilioSms } from "./twilio_sms.ts";

const { alertMessage, sendVia, vendorReceiver, verdictsOn } = vendorTesting;

const SID = "AC0123456789abcdef0123456789abcdef";
const AUTH = "f2bd4c8a7e1d5b3a9c6e0f4d2b8a7c1e";
const settings = (url: string) => ({
  account_sid: SID,
  auth_token: AUTH,
  from: "+15557122661",
  to: "+15558675310",
  url,
});

Deno.test("twilio_sms: one Messages API request per message, basic auth, one short segment", async () => {
  const vendor = vendorReceiver([{ status: 201, body: { sid: "SM1", status: "queued" } }]);
  try {
    const message = alertMessage("probe.down");
    if (message.type === "alert") message.event.data.label = "Checkout API";
    const result = await sendVia(twilioSms, settings(vendor.url), message);
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    assert.equal(vendor.received.length, 1);
    const [call] = vendor.received;
    assert.equal(call.method, "POST");
    assert.equal(call.path, `/2010-04-01/Accounts/${SID}/Messages.json`);
    assert.equal(call.headers.get("content-type"), "application/x-www-form-urlencoded");
    assert.equal(
      call.headers.get("authorization"),
      `Basic ${Buffer.from(`${SID}:${AUTH}`).toString("base64")}`,
    );
    const form = new URLSearchParams(call.body);
    assert.equal(form.get("To"), "+15558675310");
    assert.equal(form.get("From"), "+15557122661");
    const body = form.get("Body")!;
    assert.ok(body.startsWith("DOWN shop: Checkout API: answered HTTP 500, expected 200: "), body);
    assert.ok(body.length <= 160);
  } finally {
    await vendor.close();
  }
});

Deno.test("twilio_sms: a segment is 160 GSM characters, or 70 with any other", () => {
  assert.equal(oneSegment("a".repeat(160)), "a".repeat(160));
  assert.equal(oneSegment("a".repeat(200)), `${"a".repeat(157)}...`);
  const other = oneSegment("ü✓".repeat(100));
  assert.equal(Array.from(other).length, 70);
  assert.equal(oneSegment("[x]".repeat(40)).length, 70, "extension characters cost two");
});

Deno.test("twilio_sms: 429 and 5xx retried, 400 (a bad number) and 401 give up", async () => {
  const verdicts = await verdictsOn(
    (url) => sendVia(twilioSms, settings(url), alertMessage("probe.recovered")),
    [
      { status: 429, body: { code: 20429, message: "Too Many Requests", status: 429 } },
      { status: 503 },
      {
        status: 400,
        body: { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 },
      },
      { status: 401, body: { code: 20003, message: "Authenticate", status: 401 } },
    ],
  );
  assert.deepEqual(verdicts, [
    "retry HTTP 429",
    "retry HTTP 503",
    "give up HTTP 400",
    "give up HTTP 401",
  ]);
  assert.equal(twilioSms.fields.url.default, TWILIO_URL);
  assert.equal(twilioSms.fields.auth_token.secret?.mask(AUTH), "…7c1e");
  assert.equal(twilioSms.fields.to.schema.safeParse("+15558675310").success, true);
  assert.equal(twilioSms.fields.to.schema.safeParse("555-0100").success, false);
  assert.equal(twilioSms.fields.account_sid.schema.safeParse("AC/../x").success, false);
});
