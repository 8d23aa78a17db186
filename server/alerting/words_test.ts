/**
 * Alerts in words, end to end: a probe whose target answers 500 where 200 is expected from one
 * location's runner while another finds it fine; the real deliverer sends its `probe.down` to a
 * webhook, a Slack, a Discord and a mail receiver on loopback. Each names the probe's label and masked URL,
 * says what failed as a person would, names the failing and the fine locations and links to the
 * probe's page under PUBLIC_URL; the webhook's payload keeps the codes beside the words.
 */
import assert from "node:assert/strict";
import { createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
import { executeProbe } from "../runner/execute.ts";
import { probeUserAgent } from "../runner/user_agent.ts";
import { postedOf } from "../runner/remote/runner.ts";
import {
  backends,
  freshDatabase,
  LOOPBACK_ONLY,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../testing/app.ts";
import { smtpServer, TRUST_TEST_CERT, webhookReceiver } from "../testing/receivers.ts";
import { parseRoute } from "../ui/routes.js";

const PUBLIC_URL = "https://probes.example.test/monitor";

/** A quoted-printable mail body as its reader sees it (soft breaks joined, `=3D` decoded). */
const readable = (mail: string) =>
  mail.replace(/=\r?\n/g, "").replace(
    /=([0-9A-F]{2})/g,
    (_, hex) => String.fromCharCode(parseInt(hex, 16)),
  );

for (const backend of backends()) {
  Deno.test(`alerts in words: label, masked URL, cause, locations and link [${backend}]`, async () => {
    // The target fails (500) for one location's runs, told by their User-Agent.
    let failing = "";
    const target = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) =>
        (req.headers.get("user-agent") ?? "").includes(`(location=${failing})`)
          ? new Response("down for maintenance", { status: 500 })
          : new Response("ok"),
    );
    const hook = webhookReceiver([200]);
    const chat = webhookReceiver([200]);
    const talk = webhookReceiver([204]);
    const smtp = await smtpServer();
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      remoteRuns: { syncEveryMs: 0 },
      notify: {
        policy: LOOPBACK_ONLY,
        publicUrl: PUBLIC_URL,
        mail: { smtpUrl: smtp.url(), from: "monitor@example.test", tls: TRUST_TEST_CERT },
      },
    });
    const api = new TestClient(app.handler);
    const location = async (prefix: string) => {
      const made = await api.post("/api/v1/locations", { name: uniqueName(prefix) });
      assert.equal(made.status, 201);
      return { name: made.body.data.name as string, token: made.body.data.token as string };
    };
    /** A remote runner's round: it claims the location's runs, makes them and posts them. */
    const runFrom = async ({ name, token }: { name: string; token: string }) => {
      const who = { runner: `r-${name}`, version: "1" };
      const claimed = await api.post("/api/v1/runner/claim", { ...who, wait_seconds: 0 }, {
        key: token,
      });
      assert.equal(claimed.status, 200);
      const results = [];
      for (const run of claimed.body.data.runs) {
        const made = await executeProbe(
          { ...run, timeoutMs: run.timeout_ms },
          { policy: LOOPBACK_ONLY, timeoutMs: 5000, userAgent: probeUserAgent(name) },
        );
        results.push(postedOf(run, made));
      }
      assert.equal(results.length, 1);
      const posted = await api.post("/api/v1/runner/results", { ...who, results }, { key: token });
      assert.equal(posted.status, 200);
    };
    try {
      const targets = "/api/v1/notification-targets";
      for (
        const target of [
          { name: "hook", kind: "webhook", url: hook.url },
          { name: "chat", kind: "slack", url: chat.url.replace(/\/hook\?.*$/, "/services/T/B/x") },
          {
            name: "talk",
            kind: "discord",
            url: talk.url.replace(/\/hook\?.*$/, "/api/webhooks/1/x"),
          },
          { name: "team", kind: "mail", recipients: ["ops@example.test"] },
        ]
      ) {
        assert.equal((await api.post(targets, target)).status, 201);
      }
      const [eu, us] = [await location("eu"), await location("us")];
      failing = us.name;
      const project = uniqueName("shop");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      // Down when one location of the two fails, at its first failure.
      const policy = await api.patch(`/api/v1/projects/${project}/alerts`, {
        targets: ["hook", "chat", "talk", "team"],
        failure_threshold: 1,
        location_quorum: 1,
      });
      assert.equal(policy.status, 200);
      const created = await api.post(`/api/v1/projects/${project}/probes`, {
        url: `http://ops:pa55word@127.0.0.1:${target.addr.port}/health?token=tok-abc&v=2`,
        label: "Checkout",
        expect: { status: [200] },
        locations: [eu.name, us.name],
      });
      assert.equal(created.status, 201);
      const probeId: string = created.body.data.probe_id;
      // Fine from one location, then failing from the other.
      await runFrom(eu);
      await runFrom(us);
      for (let i = 0; i < 50; i++) {
        if ([hook, chat, talk].every((r) => r.received.length) && smtp.arrived.length) break;
        await app.deliverer.deliverOnce();
      }

      const link = `${PUBLIC_URL}/#/projects/${project}/probes/${probeId}`;
      const masked = `http://ops:****@127.0.0.1:${target.addr.port}/health?token=****&v=****`;
      const cause = "answered HTTP 500, expected 200";

      // The webhook: the words, and the codes beside them.
      const event = JSON.parse(hook.received[0].body);
      assert.equal(event.type, "probe.down");
      assert.equal(event.data.label, "Checkout");
      assert.equal(event.data.url, masked);
      assert.equal(event.data.cause, cause);
      assert.equal(event.data.error, "assertion failed: status");
      assert.equal(event.data.http_status, 500);
      assert.deepEqual(event.data.failed_checks, [
        { check: "status", expected: "one of 200", seen: "500" },
      ]);
      assert.deepEqual(event.data.locations.down, [us.name]);
      assert.deepEqual(event.data.locations.up, [eu.name]);
      assert.equal(event.data.link, link);
      // The link is the dashboard's own route to the probe's page.
      assert.deepEqual(parseRoute(new URL(event.data.link).hash), {
        name: "probe",
        project,
        probeId,
      });

      // Slack: the cause and the link lead, the URL (`&` escaped, as Slack reads it) and the
      // locations among the fields.
      const slack = JSON.parse(chat.received[0].body);
      assert.equal(
        slack.blocks[0].text.text,
        `:red_circle: *DOWN ${project}: Checkout*\n${cause}\n<${link}|Open in the dashboard>`,
      );
      const fields = slack.blocks[1].fields.map((f: { text: string }) => f.text);
      for (
        const field of [
          `*URL*\n${masked.replaceAll("&", "&amp;")}`,
          `*Failing from*\n${us.name}`,
          `*Fine from*\n${eu.name}`,
        ]
      ) {
        assert.ok(fields.includes(field), `${field} in ${fields}`);
      }

      // Discord: the title links to the probe's page, the cause under it, the rest as fields.
      const [embed] = JSON.parse(talk.received[0].body).embeds;
      assert.equal(embed.url, link);
      assert.equal(embed.description, cause);
      const named = embed.fields.map((f: { name: string; value: string }) =>
        `${f.name}=${f.value}`
      );
      for (const field of [`URL=${masked}`, `Failing from=${us.name}`, `Fine from=${eu.name}`]) {
        assert.ok(named.includes(field), `${field} in ${named}`);
      }

      // The mail: one line each.
      const mail = readable(smtp.arrived[0].message);
      for (
        const line of [
          "Probe: Checkout",
          `URL: ${masked}`,
          `Cause: ${cause}`,
          `Failing from: ${us.name}`,
          `Fine from: ${eu.name}`,
          `Dashboard: ${link}`,
        ]
      ) {
        assert.match(mail, new RegExp(`^${RegExp.escape(line)}\r?$`, "m"));
      }
      for (const body of [hook, chat, talk].map((r) => r.received[0].body).concat(mail)) {
        assert.ok(!body.includes("pa55word") && !body.includes("tok-abc"), "no credential");
      }

      // The incident's cause reads the same; its last error is the run's, as results give it.
      const incidents = await api.get(`/api/v1/incidents?project=${project}`);
      assert.equal(incidents.body.data[0].cause, cause);
      assert.equal(incidents.body.data[0].last_error, "assertion failed: status");
    } finally {
      await app.close();
      await target.shutdown();
      await hook.close();
      await chat.close();
      await talk.close();
      await smtp.close();
    }
  });
}
