import assert from "node:assert/strict";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { googleChat } from "./google_chat.ts";

const { alertMessage, gaveUp, HOSTILE, retried, sendEach, sendVia, vendorReceiver } = vendorTesting;

const PATH = "/v1/spaces/AAAAbcd/messages?key=AIzaSy-key&token=tok-secret";
const ESCAPED = "&lt;b&gt;bold&lt;/b&gt; @everyone @channel &lt;!here&gt; @room *_[]`~ &amp; " +
  "&quot;quoted&quot;";

Deno.test("google_chat: a cardsV2 message, card texts HTML-escaped, no text to mention from", async () => {
  const vendor = vendorReceiver([{ status: 200, body: { name: "spaces/AAAAbcd/messages/1" } }]);
  try {
    const result = await sendVia(
      googleChat,
      { url: `${vendor.url}${PATH}` },
      alertMessage("probe.down"),
    );
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    const [call] = vendor.received;
    assert.equal(call.method, "POST");
    assert.equal(call.path, PATH);
    assert.equal(call.headers.get("content-type"), "application/json; charset=UTF-8");
    const message = JSON.parse(call.body);
    assert.equal(message.text, undefined);
    assert.equal(message.cardsV2.length, 1);
    const { cardId, card } = message.cardsV2[0];
    assert.equal(cardId, "probe-down");
    assert.equal(card.header.title, `DOWN shop: Checkout ${HOSTILE}`);
    const [widgets] = card.sections.map((s: { widgets: unknown[] }) => s.widgets);
    assert.deepEqual(widgets[0], {
      textParagraph: { text: `answered HTTP 500, expected 200: ${ESCAPED}` },
    });
    assert.deepEqual(widgets[1], {
      decoratedText: { topLabel: "Project", text: "shop", wrapText: true },
    });
    assert.deepEqual(widgets[2], {
      decoratedText: { topLabel: "Probe", text: `Checkout ${ESCAPED}`, wrapText: true },
    });
    assert.deepEqual(widgets[widgets.length - 1], {
      buttonList: {
        buttons: [{
          text: "Open in the dashboard",
          onClick: {
            openLink: { url: "https://probes.example.com/#/projects/shop/probes/0123456789abcdef" },
          },
        }],
      },
    });
  } finally {
    await vendor.close();
  }
});

Deno.test("google_chat: within 32,000 bytes; 429 and 5xx retried, 400 gives up", async () => {
  const vendor = vendorReceiver([{ status: 200 }, { status: 429 }, { status: 503 }, {
    status: 400,
  }]);
  try {
    const message = alertMessage("probe.down");
    if (message.type === "alert") {
      message.event.data.label = "<".repeat(40_000);
      message.event.data.cause = "&".repeat(40_000);
    }
    const url = `${vendor.url}${PATH}`;
    assert.deepEqual(await sendVia(googleChat, { url }, message), {
      outcome: "delivered",
      attempts: 1,
    });
    assert.ok(new TextEncoder().encode(vendor.received[0].body).length < 32_000);
    const send = () => sendVia(googleChat, { url }, alertMessage("target.test"));
    assert.deepEqual(await sendEach(send, 3), [
      retried("HTTP 429"),
      retried("HTTP 503"),
      gaveUp("HTTP 400"),
    ]);
  } finally {
    await vendor.close();
  }
  assert.equal(
    googleChat.fields.url.secret?.mask(`https://chat.googleapis.com${PATH}`),
    "https://chat.googleapis.com/…",
  );
});
