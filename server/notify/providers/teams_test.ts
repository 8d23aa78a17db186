import assert from "node:assert/strict";
import {
  alertMessage,
  gaveUp,
  HOSTILE,
  retried,
  sendEach,
  sendVia,
  vendorReceiver,
} from "../../testing/vendor_receiver.ts";
import { teams } from "./teams.ts";

const PATH = "/workflows/2b5a/triggers/manual/paths/invoke?api-version=1&sig=abc";

Deno.test("teams: an Adaptive Card message, every text in plain TextRuns", async () => {
  const vendor = vendorReceiver([{ status: 202, body: "" }]);
  try {
    const result = await sendVia(
      teams,
      { url: `${vendor.url}${PATH}` },
      alertMessage("probe.down"),
    );
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    const [call] = vendor.received;
    assert.equal(call.method, "POST");
    assert.equal(call.path, PATH);
    assert.equal(call.headers.get("content-type"), "application/json");
    const message = JSON.parse(call.body);
    assert.equal(message.type, "message");
    assert.equal(message.attachments.length, 1);
    const [attachment] = message.attachments;
    assert.equal(attachment.contentType, "application/vnd.microsoft.card.adaptive");
    assert.equal(attachment.contentUrl, null);
    const card = attachment.content;
    assert.equal(card.type, "AdaptiveCard");
    assert.equal(card.$schema, "http://adaptivecards.io/schemas/adaptive-card.json");
    assert.equal(card.version, "1.4");
    // Only RichTextBlocks of TextRuns, which Teams never reads as Markdown or mentions.
    for (const block of card.body) {
      assert.equal(block.type, "RichTextBlock");
      for (const run of block.inlines) assert.equal(run.type, "TextRun");
    }
    const title = card.body[0].inlines[0];
    assert.equal(title.text, `DOWN shop: Checkout ${HOSTILE}`, "as written: plain text");
    assert.equal(title.color, "Attention");
    assert.deepEqual(card.body[1].inlines, [
      { type: "TextRun", text: `answered HTTP 500, expected 200: ${HOSTILE}` },
    ]);
    assert.deepEqual(card.actions, [{
      type: "Action.OpenUrl",
      title: "Open in the dashboard",
      url: "https://probes.example.com/#/projects/shop/probes/0123456789abcdef",
    }]);
    assert.ok(!call.body.includes("msteams"), "no mention entities");
  } finally {
    await vendor.close();
  }
});

Deno.test("teams: long texts are cut, the card stays under 28 KB; answers judged", async () => {
  const vendor = vendorReceiver([{ status: 202 }, { status: 429 }, { status: 502 }, {
    status: 400,
  }]);
  try {
    const message = alertMessage("probe.down");
    if (message.type === "alert") {
      message.event.data.label = "x".repeat(50_000);
      message.event.data.cause = "y".repeat(50_000);
    }
    const url = `${vendor.url}${PATH}`;
    assert.deepEqual(await sendVia(teams, { url }, message), { outcome: "delivered", attempts: 1 });
    assert.ok(new TextEncoder().encode(vendor.received[0].body).length < 28_000);
    const send = () => sendVia(teams, { url }, alertMessage("probe.recovered"));
    assert.deepEqual(await sendEach(send, 3), [
      retried("HTTP 429"),
      retried("HTTP 502"),
      gaveUp("HTTP 400"),
    ]);
    assert.equal(vendor.lastJson().attachments[0].content.body[0].inlines[0].color, undefined);
  } finally {
    await vendor.close();
  }
});
