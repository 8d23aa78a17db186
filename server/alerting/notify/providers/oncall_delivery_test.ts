/**
 * PagerDuty and Telegram targets through the service's interface, on both databases: created with
 * their base URLs pointed at loopback receivers shaped like the vendors, their secrets masked on
 * every read, a test send each, then a real probe failing, acknowledged and recovering: PagerDuty
 * gets `trigger`, `acknowledge` and `resolve` with one `dedup_key`, Telegram a message each.
 */
import assert from "node:assert/strict";
import { createApp } from "../../../app.ts";
import { createLogger } from "../../../base/log.ts";
import { executeProbe } from "../../../runner/execute.ts";
import {
  backends,
  freshDatabase,
  LOOPBACK_ONLY,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../../../testing/app.ts";
import { vendorReceiver } from "../../../testing/vendor_receiver.ts";

const ROUTING_KEY = "R0ut1ngK3yR0ut1ngK3yR0ut1ngK3y01";
const BOT_TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
const PUBLIC_URL = "https://probes.example.test";

for (const backend of backends()) {
  Deno.test(`pagerduty and telegram through the interface [${backend}]`, async () => {
    let status = 500;
    const site = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("checkout", { status }),
    );
    const pd = vendorReceiver([{ status: 202, body: { status: "success" } }]);
    const tg = vendorReceiver([{ status: 200, body: { ok: true, result: { message_id: 1 } } }]);
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      remoteRuns: { syncEveryMs: 0 },
      notify: { policy: LOOPBACK_ONLY, publicUrl: PUBLIC_URL },
      runProbe: (target, hooks) =>
        executeProbe(target, { ...hooks, policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
    });
    const api = new TestClient(app.handler);
    const deliverUntil = async (done: () => boolean) => {
      for (let i = 0; i < 50 && !done(); i++) await app.deliverer.deliverOnce();
      assert.ok(
        done(),
        `delivered: ${pd.received.length} to PagerDuty, ${tg.received.length} to Telegram`,
      );
    };
    try {
      // The dashboard builds each kind's form from this list: the new kinds are in it.
      const kinds = await api.get("/api/v1/notification-target-kinds");
      assert.equal(kinds.status, 200);
      const byKind = new Map(
        kinds.body.data.map((k: { kind: string; fields: unknown[] }) => [k.kind, k.fields]),
      );
      const pagerdutyFields = byKind.get("pagerduty") as Record<string, unknown>[];
      assert.deepEqual(
        pagerdutyFields.map(({ name, input, required, secret, default: value }) => ({
          name,
          input,
          required,
          secret,
          value,
        })),
        [
          { name: "routing_key", input: "secret", required: true, secret: true, value: null },
          {
            name: "url",
            input: "url",
            required: false,
            secret: false,
            value: "https://events.pagerduty.com/v2/enqueue",
          },
        ],
      );
      for (
        const kind of ["opsgenie", "teams", "google_chat", "mattermost", "matrix", "telegram"]
          .concat(["ntfy", "pushover", "gotify", "twilio_sms"])
      ) assert.ok(byKind.has(kind), kind);

      const targets = "/api/v1/notification-targets";
      const pager = await api.post(targets, {
        name: "pager",
        kind: "pagerduty",
        routing_key: ROUTING_KEY,
        url: `${pd.url}/v2/enqueue`,
      });
      assert.equal(pager.status, 201, pager.text);
      assert.equal(pager.body.data.routing_key, "…3y01");
      const phone = await api.post(targets, {
        name: "phone",
        kind: "telegram",
        bot_token: BOT_TOKEN,
        chat_id: "-1001234567890",
        url: tg.url,
      });
      assert.equal(phone.status, 201, phone.text);
      assert.equal(phone.body.data.chat_id, "-1001234567890");
      const read = await api.get(targets);
      assert.equal(read.status, 200);
      assert.ok(!read.text.includes(ROUTING_KEY) && !read.text.includes(BOT_TOKEN.slice(10)));

      // A test send each, answered at once.
      for (const name of ["pager", "phone"]) {
        const sent = await api.post(`${targets}/${name}/test`);
        assert.equal(sent.status, 200, sent.text);
        assert.equal(sent.body.data.outcome, "delivered", sent.text);
      }
      const test = pd.lastJson();
      assert.equal(test.event_action, "trigger");
      assert.equal(test.payload.severity, "info");
      assert.equal(test.routing_key, ROUTING_KEY);
      assert.equal(tg.received[0].path, `/bot${BOT_TOKEN}/sendMessage`);
      assert.match(tg.lastJson().text, /^<b>TEST probe-service: test of target phone<\/b>/);

      // A probe failing for real: down at its first failure, up at its first success.
      const project = uniqueName("shop");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const policy = await api.patch(`/api/v1/projects/${project}/alerts`, {
        targets: ["pager", "phone"],
        failure_threshold: 1,
        success_threshold: 1,
      });
      assert.equal(policy.status, 200, policy.text);
      const created = await api.post(`/api/v1/projects/${project}/probes`, {
        url: `http://127.0.0.1:${site.addr.port}/health`,
        label: "Checkout <b>@everyone</b>",
        expect: { status: [200] },
      });
      assert.equal(created.status, 201, created.text);
      const probeId: string = created.body.data.probe_id;
      const run = () => api.post(`/api/v1/projects/${project}/probes/${probeId}/run`);
      assert.equal((await run()).status, 200);
      await deliverUntil(() => pd.received.length === 2 && tg.received.length === 2);
      const trigger = pd.lastJson();
      assert.equal(trigger.event_action, "trigger");
      assert.equal(trigger.payload.severity, "critical");
      assert.equal(trigger.payload.summary, `DOWN ${project}: Checkout <b>@everyone</b>`);
      assert.equal(trigger.links[0].href, `${PUBLIC_URL}/#/projects/${project}/probes/${probeId}`);
      const incidents = await api.get(`/api/v1/incidents?project=${project}`);
      const incidentId: string = incidents.body.data[0].id;
      assert.equal(trigger.dedup_key, `probe-service:${project}:${probeId}:incident:${incidentId}`);
      const down = tg.lastJson();
      assert.equal(down.chat_id, "-1001234567890");
      assert.ok(
        down.text.startsWith(`<b>DOWN ${project}: Checkout &lt;b&gt;@everyone&lt;/b&gt;</b>`),
        down.text,
      );

      // Acknowledged here: acknowledged there, once however often it is said.
      for (let i = 0; i < 2; i++) {
        const ack = await api.post(`/api/v1/incidents/${incidentId}/acknowledge`);
        assert.equal(ack.status, 200, ack.text);
      }
      await deliverUntil(() => pd.received.length === 3 && tg.received.length === 3);
      const acknowledge = pd.lastJson();
      assert.equal(acknowledge.event_action, "acknowledge");
      assert.equal(acknowledge.dedup_key, trigger.dedup_key);
      assert.match(tg.lastJson().text, /^<b>ACKNOWLEDGED /);

      // Recovered: resolved with the same key.
      status = 200;
      assert.equal((await run()).status, 200);
      await deliverUntil(() => pd.received.length === 4 && tg.received.length === 4);
      const resolve = pd.lastJson();
      assert.equal(resolve.event_action, "resolve");
      assert.equal(resolve.dedup_key, trigger.dedup_key);
      assert.match(tg.lastJson().text, /^<b>RECOVERED /);
      for (let i = 0; i < 3; i++) await app.deliverer.deliverOnce();
      assert.equal(pd.received.length, 4, "each once");
      assert.equal(tg.received.length, 4, "each once");

      // The incident's notifications name each target; no secret in what is answered.
      const detail = await api.get(`/api/v1/incidents/${incidentId}`);
      assert.equal(detail.status, 200);
      assert.deepEqual(
        detail.body.data.notifications.map((n: { type: string; target: string }) =>
          `${n.type}>${n.target}`
        ).sort(),
        [
          "probe.acknowledged>pager",
          "probe.acknowledged>phone",
          "probe.down>pager",
          "probe.down>phone",
          "probe.recovered>pager",
          "probe.recovered>phone",
        ],
      );
      assert.ok(!detail.text.includes(ROUTING_KEY) && !detail.text.includes(BOT_TOKEN.slice(10)));
    } finally {
      await app.close();
      await site.shutdown();
      await pd.close();
      await tg.close();
    }
  });
}
