import assert from "node:assert/strict";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import type { NotifyMessage } from "../provider.ts";
import { teams } from "./teams.ts";

const { alertMessage, alertWith, HOSTILE, sendVia, vendorReceiver, verdictsOn } = vendorTesting;

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
  const long = alertWith("probe.down", { label: "x".repeat(50_000), cause: "y".repeat(50_000) });
  const recovered = alertMessage("probe.recovered");
  let sends = 0;
  const verdicts = await verdictsOn(
    (url) => sendVia(teams, { url: `${url}${PATH}` }, sends++ === 0 ? long : recovered),
    [{ status: 202 }, { status: 429 }, { status: 502 }, { status: 400 }],
  );
  assert.deepEqual(verdicts, ["delivered", "retry HTTP 429", "retry HTTP 502", "give up HTTP 400"]);
  const card = (message: NotifyMessage) => {
    const now = new Date("2030-01-01T00:00:00Z");
    const request = teams.request({ url: `http://127.0.0.1:9${PATH}` }, message, { now });
    return request.transport === "http" ? request.body! : "";
  };
  assert.ok(new TextEncoder().encode(card(long)).length < 28_000);
  assert.equal(
    JSON.parse(card(recovered)).attachments[0].content.body[0].inlines[0].color,
    undefined,
  );
});
