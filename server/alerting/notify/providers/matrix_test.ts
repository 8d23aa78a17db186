import assert from "node:assert/strict";
import * as vendorTesting from "../../../testing/vendor_receiver.ts";
import { matrix } from "./matrix.ts";

const { alertMessage, DELIVERED, gaveUp, retried, sendEach, sendVia, vendorReceiver } =
  vendorTesting;

const TOKEN = "syt_Ym90_QWxlcnRzQm90VG9rZW4_0aB1cD";
const ROOM = "!OGEhHVWSdvArJzumhm:matrix.org";
const SENT = { status: 200, body: { event_id: "$YUwRidLecu:example.com" } };

Deno.test("matrix: m.room.message PUT under the message's transaction id, body and formatted_body escaped", async () => {
  const vendor = vendorReceiver([SENT]);
  try {
    const settings = { url: vendor.url, access_token: TOKEN, room_id: ROOM };
    const result = await sendVia(matrix, settings, alertMessage("probe.down", "msg_tx1"));
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    const [call] = vendor.received;
    assert.equal(call.method, "PUT");
    assert.equal(
      call.path,
      `/_matrix/client/v3/rooms/${encodeURIComponent(ROOM)}/send/m.room.message/msg_tx1`,
    );
    assert.equal(call.headers.get("authorization"), `Bearer ${TOKEN}`);
    const event = JSON.parse(call.body);
    assert.equal(event.msgtype, "m.text");
    assert.equal(event.format, "org.matrix.custom.html");
    assert.deepEqual(event["m.mentions"], {}, "mentions no one");
    // The plain body: the text as written, but @room and @everyone broken.
    assert.ok(event.body.startsWith("DOWN shop: Checkout <b>bold</b> @\u2060everyone"));
    assert.ok(!/@(room|everyone|channel)/.test(event.body));
    assert.ok(!/@(room|everyone|channel)/.test(event.formatted_body));
    const html: string = event.formatted_body;
    assert.ok(html.includes("&lt;b&gt;bold&lt;/b&gt;"));
    assert.ok(html.includes("&lt;!here&gt;"));
    const tags = new Set((html.match(/<\/?[a-z]+/g) ?? []).map((t) => t.replace("/", "")));
    assert.deepEqual([...tags].sort(), ["<a", "<li", "<p", "<strong", "<ul"]);
    assert.ok(
      html.endsWith(
        '<p><a href="https://probes.example.com/#/projects/shop/probes/0123456789abcdef">' +
          "Open in the dashboard</a></p>",
      ),
    );
  } finally {
    await vendor.close();
  }
});

Deno.test("matrix: a retry is the same transaction; 429 waits retry_after_ms, 401 gives up", async () => {
  const vendor = vendorReceiver([
    {
      status: 429,
      body: { errcode: "M_LIMIT_EXCEEDED", error: "Too many requests", retry_after_ms: 2000 },
    },
    { status: 500, body: { errcode: "M_UNKNOWN" } },
    SENT,
    { status: 401, body: { errcode: "M_UNKNOWN_TOKEN", error: "Invalid access token passed." } },
  ]);
  try {
    const settings = { url: `${vendor.url}/`, access_token: TOKEN, room_id: ROOM };
    const send = () => sendVia(matrix, settings, alertMessage("probe.down", "msg_same"));
    assert.deepEqual(await sendEach(send, 4), [
      retried("HTTP 429", 2000),
      retried("HTTP 500"),
      DELIVERED,
      gaveUp("HTTP 401"),
    ]);
    const paths = new Set(vendor.received.map((r) => r.path));
    assert.equal(paths.size, 1, "every attempt PUT to the same transaction");
    assert.ok([...paths][0].startsWith("/_matrix/"), "one slash after the homeserver");
  } finally {
    await vendor.close();
  }
});

Deno.test("matrix: settings: a room id, not an alias; the token masked", () => {
  assert.equal(matrix.fields.room_id.schema.safeParse(ROOM).success, true);
  assert.equal(matrix.fields.room_id.schema.safeParse("#alerts:matrix.org").success, false);
  assert.equal(matrix.fields.room_id.schema.safeParse("!abc:ex ample.org").success, false);
  assert.equal(matrix.fields.access_token.secret?.mask(TOKEN), "…B1cD");
});
