import assert from "node:assert/strict";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { gotify } from "./gotify.ts";

const { alertMessage, gaveUp, HOSTILE, retried, sendEach, sendVia, vendorReceiver } = vendorTesting;

const TOKEN = "AvKcy9o-yvVhyKd";

Deno.test("gotify: POST /message with the app token, title, plain message and priority", async () => {
  const vendor = vendorReceiver([{ status: 200, body: { id: 25, appid: 5, message: "…" } }]);
  try {
    const result = await sendVia(
      gotify,
      { url: `${vendor.url}/gotify/`, token: TOKEN },
      alertMessage("probe.down"),
    );
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    const [call] = vendor.received;
    assert.equal(call.method, "POST");
    assert.equal(call.path, "/gotify/message");
    assert.equal(call.headers.get("x-gotify-key"), TOKEN);
    assert.equal(call.headers.get("content-type"), "application/json");
    const body = JSON.parse(call.body);
    assert.equal(body.title, `DOWN shop: Checkout ${HOSTILE}`);
    assert.equal(body.priority, 8);
    assert.ok(body.message.startsWith(`answered HTTP 500, expected 200: ${HOSTILE}\n`));
    assert.deepEqual(body.extras, {
      "client::display": { contentType: "text/plain" },
      "client::notification": {
        click: { url: "https://probes.example.com/#/projects/shop/probes/0123456789abcdef" },
      },
    });
  } finally {
    await vendor.close();
  }
});

Deno.test("gotify: priorities by event; 5xx retried, a refused token gives up", async () => {
  const vendor = vendorReceiver([
    { status: 200 },
    { status: 200 },
    { status: 503 },
    {
      status: 401,
      body: {
        error: "Unauthorized",
        errorCode: 401,
        errorDescription: "you need to provide a valid access token",
      },
    },
  ]);
  try {
    const send = (type: "probe.recovered" | "target.test" | "probe.down") =>
      sendVia(gotify, { url: vendor.url, token: TOKEN }, alertMessage(type));
    await send("probe.recovered");
    assert.equal(vendor.lastJson().priority, 5);
    await send("target.test");
    assert.equal(vendor.lastJson().priority, 2);
    assert.equal(
      vendor.lastJson().extras["client::notification"],
      undefined,
      "a test links nowhere",
    );
    assert.deepEqual(await sendEach(() => send("probe.down"), 2), [
      retried("HTTP 503"),
      gaveUp("HTTP 401"),
    ]);
  } finally {
    await vendor.close();
  }
});
