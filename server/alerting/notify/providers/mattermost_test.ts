import assert from "node:assert/strict";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { mattermost } from "./mattermost.ts";

const { alertMessage, sendVia, vendorReceiver, verdictsOn } = vendorTesting;

Deno.test("mattermost: an incoming-webhook post, Markdown escaped and mentions defused", async () => {
  const vendor = vendorReceiver([{ status: 200, body: "ok" }]);
  try {
    const url = `${vendor.url}/hooks/xai3ymx9r3ng7qbnmuhyj8dkwe`;
    const result = await sendVia(mattermost, { url }, alertMessage("probe.down"));
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    const [call] = vendor.received;
    assert.equal(call.method, "POST");
    assert.equal(call.path, "/hooks/xai3ymx9r3ng7qbnmuhyj8dkwe");
    assert.equal(call.headers.get("content-type"), "application/json");
    const { text } = JSON.parse(call.body);
    assert.equal(
      text.split("\n")[0],
      "**DOWN shop\\: Checkout \\<b\\>bold\\</b\\> @\u2060everyone @\u2060channel \\<\\!here\\> " +
        '@\u2060room \\*\\_\\[\\]\\`\\~ \\& "quoted"**',
    );
    assert.ok(!/@(everyone|channel|here|all|room)/.test(text), "no live mention");
    assert.ok(text.includes("- **Runs failed:** 3"));
    assert.ok(
      text.endsWith(
        "[Open in the dashboard](https://probes.example.com/#/projects/shop/probes/0123456789abcdef)",
      ),
    );
  } finally {
    await vendor.close();
  }
});

Deno.test("mattermost: a post stays within 16,383 characters", async () => {
  const vendor = vendorReceiver([{ status: 200, body: "ok" }]);
  try {
    const message = alertMessage("probe.down");
    if (message.type === "alert") {
      message.event.data.label = "*".repeat(20_000);
      message.event.data.cause = "_".repeat(20_000);
      message.event.data.url = `https://x.example/${"[".repeat(2000)}`;
    }
    await sendVia(mattermost, { url: vendor.url }, message);
    assert.ok(Array.from(vendor.lastJson().text as string).length <= 16_383);
  } finally {
    await vendor.close();
  }
});

Deno.test("mattermost: 429 and 5xx are retried, 400 gives up; the URL is masked on reads", async () => {
  const verdicts = await verdictsOn(
    (url) => sendVia(mattermost, { url }, alertMessage("probe.down")),
    [
      { status: 429, headers: { "retry-after": "2" } },
      { status: 500 },
      { status: 400, body: "Unable to parse incoming data" },
    ],
  );
  assert.deepEqual(verdicts, [
    "retry HTTP 429 after 2000 ms",
    "retry HTTP 500",
    "give up HTTP 400",
  ]);
  assert.equal(
    mattermost.fields.url.secret?.mask("https://chat.example.com/hooks/xai3ymx9r3ng7qbnmuhyj8dkwe"),
    "https://chat.example.com/…",
  );
});
