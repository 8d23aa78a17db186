import assert from "node:assert/strict";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { telegram, TELEGRAM_API_URL } from "./telegram.ts";

const { alertMessage, sendVia, vendorReceiver, verdictsOn } = vendorTesting;

const BOT_TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
const SENT = { status: 200, body: { ok: true, result: { message_id: 7 } } };

Deno.test("telegram: sendMessage with parse_mode HTML, every text escaped", async () => {
  const vendor = vendorReceiver([SENT]);
  try {
    const settings = { bot_token: BOT_TOKEN, chat_id: "-1001234567890", url: vendor.url };
    const result = await sendVia(telegram, settings, alertMessage("probe.down"));
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    const [call] = vendor.received;
    assert.equal(call.method, "POST");
    assert.equal(call.path, `/bot${BOT_TOKEN}/sendMessage`);
    assert.equal(call.headers.get("content-type"), "application/json");
    const body = JSON.parse(call.body);
    assert.equal(body.chat_id, "-1001234567890");
    assert.equal(body.parse_mode, "HTML");
    assert.deepEqual(body.link_preview_options, { is_disabled: true });
    const text: string = body.text;
    assert.ok(
      text.startsWith(
        "<b>DOWN shop: Checkout &lt;b&gt;bold&lt;/b&gt; @everyone @channel &lt;!here&gt; @room " +
          "*_[]`~ &amp; &quot;quoted&quot;</b>\n",
      ),
      text,
    );
    // The only tags are the service's own: <b> around the subject and names, one <a>.
    const tags = text.match(/<[^>]*>/g) ?? [];
    assert.ok(tags.every((t) => ["<b>", "</b>", "</a>"].includes(t) || t.startsWith('<a href="')));
    assert.ok(
      text.endsWith(
        '<a href="https://probes.example.com/#/projects/shop/probes/0123456789abcdef">' +
          "Open in the dashboard</a>",
      ),
    );
    assert.ok(text.includes("<b>Runs failed:</b> 3"));
  } finally {
    await vendor.close();
  }
});

Deno.test("telegram: what shows stays within 4,096 characters however long the texts", async () => {
  const vendor = vendorReceiver([SENT]);
  try {
    const message = alertMessage("probe.down");
    if (message.type === "alert") {
      message.event.data.label = "<&>".repeat(3000);
      message.event.data.cause = "<&>".repeat(3000);
      message.event.data.url = `https://x.example/${"a".repeat(2000)}`;
    }
    await sendVia(
      telegram,
      { bot_token: BOT_TOKEN, chat_id: "@shop_alerts", url: vendor.url },
      message,
    );
    const text: string = vendor.lastJson().text;
    const shown = text.replace(/<[^>]*>/g, "").replaceAll("&lt;", "<").replaceAll("&gt;", ">")
      .replaceAll("&amp;", "&").replaceAll("&quot;", '"');
    assert.ok(Array.from(shown).length <= 4096, `${Array.from(shown).length}`);
    assert.ok(!/&(?!amp;|lt;|gt;|quot;|#39;)/.test(text), "no entity cut in half");
  } finally {
    await vendor.close();
  }
});

Deno.test("telegram: a 429 waits retry_after, 5xx retries, 400 and 403 give up", async () => {
  const verdicts = await verdictsOn(
    (url) =>
      sendVia(telegram, { bot_token: BOT_TOKEN, chat_id: "42", url }, alertMessage("probe.down")),
    [
      {
        status: 429,
        body: {
          ok: false,
          error_code: 429,
          description: "Too Many Requests: retry after 17",
          parameters: { retry_after: 17 },
        },
      },
      { status: 502, body: "" },
      {
        status: 400,
        body: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
      },
      {
        status: 403,
        body: { ok: false, error_code: 403, description: "Forbidden: bot was blocked by the user" },
      },
    ],
  );
  assert.deepEqual(verdicts, [
    "retry HTTP 429 after 17000 ms",
    "retry HTTP 502",
    "give up HTTP 400",
    "give up HTTP 403",
  ]);
});

Deno.test("telegram: the Bot API by default; the token never shows in errors or reads", async () => {
  const request = telegram.request(
    { bot_token: BOT_TOKEN, chat_id: "42" },
    alertMessage("probe.down"),
    { now: new Date() },
  );
  assert.equal(
    request.transport === "http" && request.url,
    `${TELEGRAM_API_URL}/bot${BOT_TOKEN}/sendMessage`,
  );
  assert.equal(telegram.fields.url.default, "https://api.telegram.org");
  assert.equal(telegram.fields.bot_token.secret?.mask(BOT_TOKEN), "…Dsaw");
  // Nothing listens on port 9: the error names what happened, not the URL with its token.
  const result = await sendVia(telegram, {
    bot_token: BOT_TOKEN,
    chat_id: "42",
    url: "http://127.0.0.1:9",
  }, alertMessage("probe.down"));
  assert.equal(result.outcome, "failed");
  assert.ok(!JSON.stringify(result).includes(BOT_TOKEN.split(":")[1]), JSON.stringify(result));
  assert.equal(telegram.fields.bot_token.schema.safeParse("123:short").success, false);
  assert.equal(telegram.fields.chat_id.schema.safeParse("@shop_alerts").success, true);
  assert.equal(telegram.fields.chat_id.schema.safeParse("42; drop").success, false);
});
