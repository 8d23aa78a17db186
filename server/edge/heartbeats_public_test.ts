/**
 * A heartbeat where the public looks: a status page names it by its probe id (`probe_ids`) and
 * shows its state as a probe's, up after a success ping and down after a failure, and with
 * `show_urls` the words `heartbeat <name>` for its URL; a badge made for its probe id serves that
 * state, and its latency badge is its run time's; neither ever shows its ping URL's token. Its
 * alert links to the heartbeat's own page in the dashboard. On both databases, through the real
 * handler.
 */
import assert from "node:assert/strict";
import { createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
import {
  backends,
  BASE,
  freshDatabase,
  LOOPBACK_ONLY,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../testing/app.ts";
import { heartbeatApp, heartbeatsPath } from "../testing/heartbeats.ts";
import { webhookReceiver } from "../testing/receivers.ts";
import { parseRoute } from "../ui/routes.js";

const anonymous = { key: null };

for (const backend of backends()) {
  Deno.test(`a heartbeat on a status page and a badge [${backend}]`, async () => {
    const { app, api } = await heartbeatApp(backend);
    try {
      const project = uniqueName("hp");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      // Pages and badges are cached for seconds: each is read once, after both pings.
      const ids: string[] = [];
      const tokens: string[] = [];
      for (const [name, suffix] of [["backup", ""], ["queue", "/fail"]]) {
        const made = await api.post(heartbeatsPath(project), { name, period_seconds: 3600 });
        assert.equal(made.status, 201, made.text);
        ids.push(made.body.data.probe_id);
        tokens.push(new URL(made.body.data.ping_url).pathname.split("/").at(-1)!);
        const answer = await app.handler(new Request(`${BASE}/ping/${tokens.at(-1)}${suffix}`));
        assert.equal(answer.status, 200, await answer.text());
      }

      const page = await api.patch(`/api/v1/projects/${project}/status-page`, {
        public: true,
        show_urls: true,
        probe_ids: ids,
      });
      assert.equal(page.status, 200, page.text);
      const json = await api.get(`/status/${project}/status.json`, anonymous);
      assert.deepEqual(
        json.body.probes.map((p: { name: string; state: string }) => [p.name, p.state]),
        [["backup", "up"], ["queue", "down"]],
      );
      // Its URL in words a reader understands: never `heartbeat://`, never the ping URL.
      assert.deepEqual(json.body.probes.map((p: { url: string }) => p.url), [
        "heartbeat backup",
        "heartbeat queue",
      ]);
      const html = (await api.get(`/status/${project}`, anonymous)).text;
      assert.match(html, /heartbeat backup/);
      assert.doesNotMatch(html, /heartbeat:\/\//);
      const svgs: string[] = [];
      for (const probeId of ids) {
        const badge = await api.post(`/api/v1/projects/${project}/badges`, { probe_id: probeId });
        assert.equal(badge.status, 201, badge.text);
        svgs.push((await api.get(badge.body.data.urls.status_svg, anonymous)).text);
        svgs.push((await api.get(badge.body.data.urls.latency_svg, anonymous)).text);
      }
      assert.match(svgs[0], />up</);
      assert.match(svgs[2], />down</);
      // A heartbeat has no latency: its latency badge is its runs' time, from /start to success.
      for (const svg of [svgs[1], svgs[3]]) {
        assert.match(svg, />run time p95 24h</);
        assert.doesNotMatch(svg, /latency/);
      }
      // A project's latency badge is its probes' alone (it has none here: no data).
      const whole = await api.post(`/api/v1/projects/${project}/badges`, {});
      assert.equal(whole.status, 201, whole.text);
      const face = (await api.get(`${whole.body.data.urls.json}?kind=latency`, anonymous)).body;
      assert.deepEqual([face.label, face.message], ["latency p95 24h", "no data"]);
      // Even with URLs shown, no ping token: it stays the job's secret.
      for (const text of [html, json.text, ...svgs]) {
        for (const token of tokens) assert.ok(!text.includes(token), "no token");
      }
    } finally {
      await app.close();
    }
  });
}

const PUBLIC_URL = "https://probes.example.test/monitor";

for (const backend of backends()) {
  Deno.test(`a heartbeat's alert links to the heartbeat's page [${backend}]`, async () => {
    const hook = webhookReceiver([200]);
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      remoteRuns: { syncEveryMs: 0 },
      notify: { policy: LOOPBACK_ONLY, publicUrl: PUBLIC_URL },
    });
    const api = new TestClient(app.handler);
    try {
      const made = await api.post("/api/v1/notification-targets", {
        name: uniqueName("hook"),
        kind: "webhook",
        url: hook.url,
      });
      assert.equal(made.status, 201, made.text);
      const project = uniqueName("hl");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const policy = await api.patch(`/api/v1/projects/${project}/alerts`, {
        targets: [made.body.data.name],
      });
      assert.equal(policy.status, 200, policy.text);
      const hb = await api.post(heartbeatsPath(project), {
        name: "nightly-backup",
        period_seconds: 3600,
      });
      assert.equal(hb.status, 201, hb.text);
      const token = new URL(hb.body.data.ping_url).pathname.split("/").at(-1);
      const answer = await app.handler(new Request(`${BASE}/ping/${token}/fail`));
      assert.equal(answer.status, 200, await answer.text());
      for (let i = 0; i < 50 && hook.received.length === 0; i++) await app.deliverer.deliverOnce();
      const event = JSON.parse(hook.received[0].body);
      assert.equal(event.type, "probe.down");
      assert.equal(
        event.data.link,
        `${PUBLIC_URL}/#/projects/${project}/heartbeats/nightly-backup`,
      );
      assert.deepEqual(parseRoute(new URL(event.data.link).hash), {
        name: "heartbeat",
        project,
        heartbeat: "nightly-backup",
      });
    } finally {
      await app.close();
      await hook.close();
    }
  });
}
