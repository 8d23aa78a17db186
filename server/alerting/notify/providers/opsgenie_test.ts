import assert from "node:assert/strict";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { opsgenie, OPSGENIE_URL } from "./opsgenie.ts";

const { alertMessage, HOSTILE, sendVia, vendorReceiver, verdictsOn } = vendorTesting;

const API_KEY = "eb243592-faa2-4ba2-a551-1afdf565c889";
const ACCEPTED = {
  status: 202,
  body: { result: "Request will be processed", took: 0.302, requestId: "43a29c5c-3dbf" },
};
const ALIAS = "probe-service:shop:0123456789abcdef:incident:42";

Deno.test("opsgenie: a down creates the alert by alias, acknowledge and recovery act on that alias", async () => {
  const vendor = vendorReceiver([ACCEPTED]);
  try {
    for (const type of ["probe.down", "probe.acknowledged", "probe.recovered"] as const) {
      const message = alertMessage(type);
      if (message.type === "alert") message.event.data.label += " long".repeat(40);
      const result = await sendVia(opsgenie, { api_key: API_KEY, url: vendor.url }, message);
      assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    }
    const [create, ack, close] = vendor.received;
    for (const call of vendor.received) {
      assert.equal(call.method, "POST");
      assert.equal(call.headers.get("authorization"), `GenieKey ${API_KEY}`);
      assert.equal(call.headers.get("content-type"), "application/json");
    }
    assert.equal(create.path, "/v2/alerts");
    const encoded = encodeURIComponent(ALIAS);
    assert.equal(ack.path, `/v2/alerts/${encoded}/acknowledge?identifierType=alias`);
    assert.equal(close.path, `/v2/alerts/${encoded}/close?identifierType=alias`);
    assert.equal(JSON.parse(close.body).source, "probe-service");

    const alert = JSON.parse(create.body);
    assert.equal(alert.alias, ALIAS);
    assert.equal(alert.priority, "P1");
    assert.equal(Array.from(alert.message as string).length, 130, "message cut to 130");
    assert.ok(alert.message.startsWith("DOWN shop: Checkout <b>bold</b> @everyone"));
    assert.ok(alert.message.endsWith("…"));
    assert.ok(alert.description.includes(`answered HTTP 500, expected 200: ${HOSTILE}`));
    assert.ok(
      alert.description.endsWith(
        "https://probes.example.com/#/projects/shop/probes/0123456789abcdef",
      ),
    );
    assert.deepEqual(alert.tags, ["probe-service", "shop"]);
    assert.equal(alert.details["Runs failed"], "3");
    assert.ok(JSON.stringify(alert.details).length <= 8000);
  } finally {
    await vendor.close();
  }
});

Deno.test("opsgenie: the US API by default; degraded is P3, a test P5", async () => {
  const request = opsgenie.request({ api_key: API_KEY }, alertMessage("probe.down"), {
    now: new Date(),
  });
  assert.equal(request.transport === "http" && request.url, "https://api.opsgenie.com/v2/alerts");
  assert.equal(OPSGENIE_URL, opsgenie.fields.url.default);
  const vendor = vendorReceiver([ACCEPTED]);
  try {
    await sendVia(
      opsgenie,
      { api_key: API_KEY, url: `${vendor.url}/` },
      alertMessage("probe.degraded"),
    );
    assert.equal(vendor.received[0].path, "/v2/alerts", "a base URL's trailing slash is one");
    assert.equal(vendor.lastJson().priority, "P3");
    await sendVia(opsgenie, { api_key: API_KEY, url: vendor.url }, alertMessage("target.test"));
    assert.equal(vendor.lastJson().priority, "P5");
  } finally {
    await vendor.close();
  }
});

Deno.test("opsgenie: 429 and 5xx are retried, 422 and a refused key give up", async () => {
  const results: unknown[] = [];
  const verdicts = await verdictsOn(
    async (url) => {
      const result = await sendVia(opsgenie, { api_key: API_KEY, url }, alertMessage("probe.down"));
      results.push(result);
      return result;
    },
    [
      { status: 429, body: { message: "Rate limit exceeded" } },
      { status: 500, body: "" },
      { status: 422, body: { message: "Request body is not processable" } },
      { status: 401, body: { message: `Key ${API_KEY} is invalid` } },
    ],
  );
  assert.deepEqual(verdicts, [
    "retry HTTP 429",
    "retry HTTP 500",
    "give up HTTP 422",
    "give up HTTP 401",
  ]);
  assert.ok(!JSON.stringify(results).includes(API_KEY), "the vendor's echo of the key is not kept");
});
