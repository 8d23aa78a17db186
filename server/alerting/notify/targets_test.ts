import assert from "node:assert/strict";
import { type AlertEvent, alertEvent } from "@probe/shared";
import { Webhook } from "standardwebhooks";
import { createApp } from "../../app.ts";
import type { DatabaseHandle } from "../../storage/database.ts";
import { createTarget } from "../../domain/targets.ts";
import { toApiError } from "../../procedures/errors.ts";
import { createLogger } from "../../base/log.ts";
import { createNetworkPolicy } from "../../base/outbound/network_policy.ts";
import { backends, freshDatabase, TEST_API_KEY, TestClient } from "../../testing/app.ts";
import {
  closedPort,
  smtpServer,
  TEST_TLS_CERT,
  TEST_TLS_KEY,
  TRUST_TEST_CERT,
  webhookReceiver,
} from "../../testing/receivers.ts";
import { createContext } from "../../procedures/context.ts";
import { createCallerFactory } from "../../procedures/init.ts";
import { appRouter } from "../../procedures/router.ts";
import { discordMessage, slackMessage, subjectOf } from "./formats.ts";
import { createNotifier, type NotifierDeps, testEvent } from "./targets.ts";

const LOOPBACK = createNetworkPolicy(["127.0.0.0/8"]);
const CLOSED = createNetworkPolicy();

const DOWN: AlertEvent = {
  type: "probe.down",
  timestamp: "2026-11-22T12:00:00.000Z",
  data: {
    incident_id: "42",
    project: "shop",
    probe_id: "0123456789abcdef",
    label: "https://shop.example.com/health",
    url: "https://shop.example.com/health",
    link: null,
    state: "down",
    cause: "answered HTTP 503, expected a status below 400",
    error: "HTTP 503",
    http_status: 503,
    failed_checks: null,
    started_at: "2026-11-22T11:59:00.000Z",
    resolved_at: null,
    duration_seconds: null,
    runs_failed: 3,
    locations: { down: ["local"], up: [], degraded: [], unknown: [], stale: [] },
  },
};

/**
 * One embedded database for this file's notifier tests (each start of one costs a second of CPU),
 * with the names of the targets the migrations made, which each test leaves as it found them.
 */
let shared: Promise<{ handle: DatabaseHandle; builtIn: string[] }> | undefined;

async function sharedDatabase() {
  shared ??= freshDatabase("pglite").then(async (handle) => ({
    handle,
    builtIn: (await handle.db.selectFrom("notification_targets").select("name").execute())
      .map((r) => r.name),
  }));
  return await shared;
}

/**
 * Runs `fn` with a notifier over an embedded database holding no target but the built-in ones,
 * and what it wrote to the log target.
 */
async function withNotifier(
  deps: Partial<Omit<NotifierDeps, "db">>,
  fn: (ctx: {
    handle: DatabaseHandle;
    send: ReturnType<typeof createNotifier>["send"];
    lines: string[];
  }) => Promise<void>,
) {
  const { handle, builtIn } = await sharedDatabase();
  const lines: string[] = [];
  const notifier = createNotifier({
    policy: LOOPBACK,
    writeLine: (line) => lines.push(line),
    ...deps,
    db: handle.db,
  });
  try {
    await fn({ handle, send: notifier.send, lines });
  } finally {
    const made = handle.db.deleteFrom("notification_targets");
    await (builtIn.length > 0 ? made.where("name", "not in", builtIn) : made).execute();
  }
}

/** The headers of a received call as a record, as the standardwebhooks package takes them. */
const headersOf = (headers: Headers) => Object.fromEntries(headers);

Deno.test("notify: a webhook target gets the event as JSON, signed per Standard Webhooks", async () => {
  const hook = webhookReceiver([200]);
  try {
    await withNotifier({}, async ({ handle, send }) => {
      const { secret } = await createTarget({
        db: handle.db,
        input: { name: "ops", kind: "webhook", url: hook.url },
      });
      const result = await send("ops", { id: "msg_1", event: DOWN });
      assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
      assert.equal(hook.received.length, 1);
      const { headers, body } = hook.received[0];
      assert.deepEqual(JSON.parse(body), DOWN);
      assert.equal(headers.get("content-type"), "application/json");
      assert.equal(headers.get("webhook-id"), "msg_1");
      assert.match(headers.get("webhook-signature") ?? "", /^v1,[A-Za-z0-9+/]+=*$/);
      // The receiver's side: the package's own verification, with the key the create answered.
      assert.deepEqual(new Webhook(secret!).verify(body, headersOf(headers)), DOWN);
      assert.throws(
        () => new Webhook(`whsec_${btoa("x".repeat(32))}`).verify(body, headersOf(headers)),
        /No matching signature/,
      );
      assert.throws(
        () => new Webhook(secret!).verify(body.replace("503", "504"), headersOf(headers)),
        /No matching signature/,
      );
    });
  } finally {
    await hook.close();
  }
});

Deno.test("notify: the same message sent again keeps its webhook-id; another gets its own", async () => {
  const hook = webhookReceiver([503, 200]);
  try {
    await withNotifier({}, async ({ handle, send }) => {
      const { secret } = await createTarget({
        db: handle.db,
        input: { name: "ops", kind: "webhook", url: hook.url },
      });
      assert.deepEqual(await send("ops", { id: "msg_a", event: DOWN }), {
        outcome: "failed",
        attempts: 1,
        error: "HTTP 503",
      });
      assert.deepEqual(await send("ops", { id: "msg_a", event: DOWN }), {
        outcome: "delivered",
        attempts: 1,
      });
      await send("ops", { id: "msg_b", event: DOWN });
      assert.deepEqual(hook.received.map((r) => r.headers.get("webhook-id")), [
        "msg_a",
        "msg_a",
        "msg_b",
      ]);
      for (const r of hook.received) new Webhook(secret!).verify(r.body, headersOf(r.headers));
    });
  } finally {
    await hook.close();
  }
});

Deno.test("notify: a loopback target is blocked by the network policy unless it is opened", async () => {
  const hook = webhookReceiver([200]);
  try {
    await withNotifier({ policy: CLOSED }, async ({ handle, send }) => {
      for (const [name, kind] of [["h", "webhook"], ["s", "slack"], ["d", "discord"]] as const) {
        await createTarget({ db: handle.db, input: { name, kind, url: hook.url } });
        assert.deepEqual(await send(name, { id: "m", event: DOWN }), {
          outcome: "failed",
          attempts: 0,
          error: "blocked: 127.0.0.1 is loopback (not in PROBE_ALLOW_NETWORKS)",
        }, kind);
      }
      assert.equal(hook.received.length, 0);
      // A name that resolves to a private address is refused on what it resolves to.
      await createTarget({
        db: handle.db,
        input: { name: "named", kind: "slack", url: "https://hooks.internal.test/x/tok" },
      });
      const resolving = createNotifier({
        db: handle.db,
        policy: CLOSED,
        resolve: () => Promise.resolve(["10.1.2.3"]),
      });
      assert.deepEqual(await resolving.send("named", { id: "m", event: DOWN }), {
        outcome: "failed",
        attempts: 0,
        error: "blocked: 10.1.2.3 is private (not in PROBE_ALLOW_NETWORKS)",
      });
    });
    await withNotifier({ policy: LOOPBACK }, async ({ handle, send }) => {
      await createTarget({ db: handle.db, input: { name: "h", kind: "slack", url: hook.url } });
      assert.equal((await send("h", { id: "m", event: DOWN })).outcome, "delivered");
      assert.equal(hook.received.length, 1);
    });
  } finally {
    await hook.close();
  }
});

Deno.test("notify: a Slack target gets a text line and blocks with the details, markup escaped in both", async () => {
  const hook = webhookReceiver([200]);
  try {
    await withNotifier({}, async ({ handle, send }) => {
      await createTarget({ db: handle.db, input: { name: "s", kind: "slack", url: hook.url } });
      const event: AlertEvent = {
        ...DOWN,
        data: { ...DOWN.data, label: "<!channel> & co", cause: "timeout" },
      };
      assert.equal((await send("s", { id: "m", event })).outcome, "delivered");
      const { headers, body } = hook.received[0];
      assert.equal(headers.get("content-type"), "application/json");
      assert.equal(headers.has("webhook-signature"), false, "Slack is not signed");
      const message = JSON.parse(body);
      // Slack pushes `text` to phones and reads it as mrkdwn: escaped like the blocks.
      assert.equal(message.text, "DOWN shop: &lt;!channel&gt; &amp; co");
      assert.deepEqual(message.blocks.map((b: { type: string }) => b.type), [
        "section",
        "section",
        "context",
      ]);
      assert.equal(message.blocks[0].text.type, "mrkdwn");
      // Markup in a label is escaped in blocks: no mention, no link.
      assert.equal(
        message.blocks[0].text.text,
        ":red_circle: *DOWN shop: &lt;!channel&gt; &amp; co*\ntimeout",
      );
      const fields = message.blocks[1].fields.map((f: { text: string }) => f.text);
      assert.deepEqual(fields, [
        "*Project*\nshop",
        "*Probe*\n&lt;!channel&gt; &amp; co",
        "*URL*\nhttps://shop.example.com/health",
        "*State*\ndown",
        "*Runs failed*\n3",
        "*Failing from*\nlocal",
        "*Started*\n2026-11-22T11:59:00.000Z",
        "*Incident*\n42",
        "*Probe id*\n0123456789abcdef",
      ]);
      assert.equal(message.blocks[2].elements[0].text, "probe.down at 2026-11-22T12:00:00.000Z");
    });
  } finally {
    await hook.close();
  }
});

Deno.test("notify: a Discord target gets content and an embed with fields, mentions off", async () => {
  const hook = webhookReceiver([204]);
  try {
    await withNotifier({}, async ({ handle, send }) => {
      await createTarget({ db: handle.db, input: { name: "d", kind: "discord", url: hook.url } });
      const event: AlertEvent = {
        type: "probe.recovered",
        timestamp: "2026-11-22T13:00:00.000Z",
        data: {
          ...DOWN.data,
          label: "@everyone api",
          state: "up",
          cause: null,
          resolved_at: "2026-11-22T13:00:00.000Z",
          duration_seconds: 3660,
        },
      };
      assert.deepEqual(await send("d", { id: "m", event }), { outcome: "delivered", attempts: 1 });
      const message = JSON.parse(hook.received[0].body);
      assert.equal(message.content, "RECOVERED shop: @everyone api");
      assert.deepEqual(message.allowed_mentions, { parse: [] });
      assert.equal(message.embeds.length, 1);
      const [embed] = message.embeds;
      assert.equal(embed.title, "RECOVERED shop: @everyone api");
      assert.equal(embed.color, 0x1e8e3e);
      assert.equal(embed.timestamp, "2026-11-22T13:00:00.000Z");
      assert.deepEqual(
        embed.fields.map((f: { name: string; value: string }) => `${f.name}=${f.value}`),
        [
          "Project=shop",
          "Probe=@everyone api",
          "URL=https://shop.example.com/health",
          "State=up",
          "Runs failed=3",
          "Failing from=local",
          "Started=2026-11-22T11:59:00.000Z",
          "Resolved=2026-11-22T13:00:00.000Z",
          "Duration=1 h 1 min",
          "Incident=42",
          "Probe id=0123456789abcdef",
        ],
      );
    });
  } finally {
    await hook.close();
  }
});

Deno.test("notify: failures are summaries: status, timeout, refused, redirect, TLS, never the remote's text", async () => {
  const hostile = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("tok-secret echoed", { status: 500, statusText: "tok-secret" }),
  );
  const redirect = webhookReceiver([302]);
  const tls = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: TEST_TLS_CERT, key: TEST_TLS_KEY, onListen() {} },
    () => new Response("ok"),
  );
  let release!: () => void;
  const hang = new Promise<void>((r) => release = r);
  const slow = webhookReceiver([200], { hang });
  try {
    // Long enough for a refused TLS handshake on a busy machine (300 ms was not, in CI), short
    // enough for the hanging receiver's case.
    await withNotifier({ timeoutMs: 1500 }, async ({ handle, send }) => {
      const cases: [string, string, Record<string, unknown>][] = [
        [`http://127.0.0.1:${hostile.addr.port}/x?token=tok-secret`, "HTTP 500", {}],
        [redirect.url, "redirect not followed", {}],
        [`http://127.0.0.1:${closedPort()}/x?token=tok-secret`, "connection refused", {}],
        [`https://localhost:${tls.addr.port}/x?token=tok-secret`, "TLS: ", {}],
        [slow.url, "timeout", {}],
      ];
      for (const [i, [url, summary]] of cases.entries()) {
        const name = `t${i}`;
        await createTarget({ db: handle.db, input: { name, kind: "slack", url } });
        const result = await send(name, { id: "m", event: DOWN });
        assert.equal(result.outcome, "failed", url);
        assert.ok(result.error?.startsWith(summary), `${url}: ${result.error}`);
        assert.ok(!result.error?.includes("tok-secret"), result.error ?? "");
        assert.ok(!result.error?.includes("127.0.0.1:"), result.error ?? "");
      }
      assert.equal(redirect.received.length, 1, "the redirect was not followed");
      assert.deepEqual(await send("nobody", { id: "m", event: DOWN }), {
        outcome: "failed",
        attempts: 0,
        error: "target not found",
      });
    });
  } finally {
    release();
    await hostile.shutdown();
    await tls.shutdown();
    await redirect.close();
    await slow.close();
  }
});

Deno.test("notify: an https target is reached with the CA given", async () => {
  const tls = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: TEST_TLS_CERT, key: TEST_TLS_KEY, onListen() {} },
    () => new Response("ok"),
  );
  try {
    await withNotifier({ ca: TEST_TLS_CERT }, async ({ handle, send }) => {
      const url = `https://localhost:${tls.addr.port}/hooks/x`;
      await createTarget({ db: handle.db, input: { name: "s", kind: "slack", url } });
      const result = await send("s", { id: "m", event: DOWN });
      // localhost resolves to a loopback address, opened by the policy.
      assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    });
  } finally {
    await tls.shutdown();
  }
});

Deno.test("notify: a mail target sends through SMTP_URL and MAIL_FROM, subject line first", async () => {
  const smtp = await smtpServer();
  try {
    await withNotifier({
      mail: { smtpUrl: smtp.url(), from: "Monitor <monitor@example.test>", tls: TRUST_TEST_CERT },
    }, async ({ handle, send }) => {
      await createTarget({
        db: handle.db,
        input: { name: "m", kind: "mail", recipients: ["ops@example.test", "b@example.test"] },
      });
      assert.deepEqual(await send("m", { id: "x", event: DOWN }), {
        outcome: "delivered",
        attempts: 1,
      });
      assert.equal(smtp.arrived.length, 1);
      const mail = smtp.arrived[0];
      assert.equal(mail.from, "monitor@example.test");
      assert.deepEqual(mail.to, ["ops@example.test", "b@example.test"]);
      assert.match(mail.message, /^Subject: DOWN shop: https:\/\/shop\.example\.com\/health\r$/m);
      assert.match(mail.message, /Cause: answered HTTP 503, expected a status below 400/);
      assert.match(mail.message, /"type": "probe\.down"/);
      for (
        const [type, word] of [
          ["probe.recovered", "RECOVERED"],
          ["probe.degraded", "DEGRADED"],
          ["probe.reminder", "REMINDER"],
        ] as const
      ) {
        await send("m", { id: "x", event: { ...DOWN, type } });
        assert.match(smtp.arrived.at(-1)!.message, new RegExp(`^Subject: ${word} shop: `, "m"));
      }
    });
    await withNotifier({}, async ({ handle, send }) => {
      await createTarget({
        db: handle.db,
        input: { name: "m", kind: "mail", recipients: ["ops@example.test"] },
      });
      assert.deepEqual(await send("m", { id: "x", event: DOWN }), {
        outcome: "not_configured",
        attempts: 0,
        error: "not configured: SMTP_URL, MAIL_FROM",
      });
    });
  } finally {
    await smtp.close();
  }
});

Deno.test("notify: the log target writes one JSON line", async () => {
  await withNotifier({ now: () => new Date("2026-11-22T12:00:01Z") }, async ({ send, lines }) => {
    assert.deepEqual(await send("log", { id: "msg_9", event: DOWN }), {
      outcome: "delivered",
      attempts: 1,
    });
    assert.equal(lines.length, 1);
    assert.deepEqual(JSON.parse(lines[0]), {
      time: "2026-11-22T12:00:01.000Z",
      level: "info",
      msg: "alert",
      id: "msg_9",
      target: "log",
      event: DOWN,
    });
  });
});

Deno.test("notify: a failure of the database is a failed delivery, not an exception", async () => {
  const handle = await freshDatabase("pglite");
  await handle.close();
  const warnings: string[] = [];
  const notifier = createNotifier({
    db: handle.db,
    policy: LOOPBACK,
    log: createLogger("warn", (line) => warnings.push(line)),
  });
  assert.deepEqual(await notifier.send("ops", { id: "m", event: DOWN }), {
    outcome: "failed",
    attempts: 0,
    error: "internal error",
  });
  assert.equal(warnings.length, 1);
  assert.equal(JSON.parse(warnings[0]).msg, "notification not sent");
});

Deno.test("notify: without a notifier the test procedure answers 503", async () => {
  const handle = await freshDatabase("pglite");
  try {
    const caller = createCallerFactory(appRouter)(
      createContext({ db: handle.db, authenticated: true }),
    );
    const failure = await caller.targets.test({ name: "log" }).then(() => null, (e) => e);
    assert.deepEqual(toApiError(failure).body.error, {
      code: "service_unavailable",
      message: "Notification delivery is not available",
    });
  } finally {
    await handle.close();
  }
});

Deno.test("notify: a label with mentions pings no one on Slack (text and blocks) or Discord", async () => {
  // The label of the security run's finding: Slack's `text` carried `<!channel>` unescaped.
  const label = "Edge <!channel> <!here|here> <@U123> @everyone & <https://evil.test|click>";
  const slack = webhookReceiver([200]);
  const discord = webhookReceiver([204]);
  try {
    await withNotifier({}, async ({ handle, send }) => {
      await createTarget({ db: handle.db, input: { name: "s", kind: "slack", url: slack.url } });
      await createTarget({
        db: handle.db,
        input: { name: "d", kind: "discord", url: discord.url },
      });
      const event: AlertEvent = { ...DOWN, data: { ...DOWN.data, label } };
      assert.equal((await send("s", { id: "m1", event })).outcome, "delivered");
      assert.equal((await send("d", { id: "m2", event })).outcome, "delivered");
      const body = slack.received[0].body;
      // Slack markup (mentions, links) starts with `<`: none reaches Slack anywhere in the body.
      assert.equal(JSON.parse(body).text.includes("<"), false, JSON.parse(body).text);
      assert.doesNotMatch(JSON.stringify(JSON.parse(body)), /</);
      assert.equal(
        JSON.parse(body).text,
        "DOWN shop: Edge &lt;!channel&gt; &lt;!here|here&gt; &lt;@U123&gt; @everyone &amp; " +
          "&lt;https://evil.test|click&gt;",
      );
      const message = JSON.parse(discord.received[0].body);
      assert.equal(message.content, `DOWN shop: ${label}`);
      assert.deepEqual(message.allowed_mentions, { parse: [] }, "Discord: mentions off");
    });
  } finally {
    await slack.close();
    await discord.close();
  }
});

Deno.test("notify: the first line is one line, and long labels stay within Slack's and Discord's limits", () => {
  const event = { ...DOWN, data: { ...DOWN.data, label: "a\r\nBcc: x@example.com\u0000z" } };
  assert.equal(subjectOf(event), "DOWN shop: a Bcc: x@example.com z");
  const long = { ...DOWN, data: { ...DOWN.data, label: "é".repeat(5000) } };
  const discord = discordMessage(long);
  assert.equal(Array.from(discord.embeds[0].title).length, 256);
  assert.ok(discord.embeds[0].title.endsWith("…"));
  assert.ok(discord.embeds[0].fields.every((f) => f.value.length <= 1024));
  assert.ok(Array.from(discord.content).length <= 2000);
  const slack = slackMessage(long);
  assert.ok(Array.from(slack.text).length <= 3000);
  assert.ok(slack.blocks[1].fields!.every((f) => f.text.length <= 2000));
});

Deno.test("notify: the test event is a valid alert event naming the target", () => {
  const event = testEvent("ops", new Date("2026-11-22T12:00:00Z"));
  assert.equal(alertEvent.safeParse(event).success, true);
  assert.equal(event.type, "target.test");
  assert.equal(event.data.label, "test of target ops");
});

for (const backend of backends()) {
  Deno.test(`notification targets: test endpoint and secrets [${backend}]`, async (t) => {
    const hook = webhookReceiver([200]);
    const chat = webhookReceiver([200]);
    const smtp = await smtpServer();
    const logged: string[] = [];
    const lines: string[] = [];
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("debug", (line) => logged.push(line)),
      notify: {
        policy: LOOPBACK,
        writeLine: (line) => lines.push(line),
        mail: { smtpUrl: smtp.url(), from: "monitor@example.test", tls: TRUST_TEST_CERT },
      },
    });
    const api = new TestClient(app.handler);
    const PATH = "/api/v1/notification-targets";
    // Secrets of every kind, and every form they could take in an answer or a log line.
    const slackUrl = chat.url.replace(
      "/hook?token=tok-secret",
      "/services/T0/B0/slack-SECRET-path",
    );
    const secrets: string[] = ["slack-SECRET-path"];
    try {
      await t.step("testing each kind answers its outcome and reaches the receiver", async () => {
        const created = await api.post(PATH, { name: "ops-hook", kind: "webhook", url: hook.url });
        assert.equal(created.status, 201);
        const key: string = created.body.data.secret;
        secrets.push(key, key.slice(6));
        assert.equal(
          (await api.post(PATH, { name: "chat", kind: "slack", url: slackUrl })).status,
          201,
        );
        assert.equal(
          (await api.post(PATH, { name: "team", kind: "mail", recipients: ["ops@example.test"] }))
            .status,
          201,
        );

        let res = await api.post(`${PATH}/ops-hook/test`);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, {
          data: { target: "ops-hook", outcome: "delivered", attempts: 1 },
        });
        const call = hook.received[0];
        const event = new Webhook(key).verify(call.body, headersOf(call.headers)) as AlertEvent;
        assert.equal(event.type, "target.test");
        assert.equal(event.data.label, "test of target ops-hook");
        assert.match(call.headers.get("webhook-id") ?? "", /^msg_test_/);

        res = await api.post(`${PATH}/chat/test`, {});
        assert.deepEqual(res.body.data, { target: "chat", outcome: "delivered", attempts: 1 });
        assert.equal(
          JSON.parse(chat.received[0].body).text,
          "TEST probe-service: test of target chat",
        );

        res = await api.post(`${PATH}/team/test`);
        assert.deepEqual(res.body.data, { target: "team", outcome: "delivered", attempts: 1 });
        assert.match(
          smtp.arrived[0].message,
          /^Subject: TEST probe-service: test of target team\r$/m,
        );

        res = await api.post(`${PATH}/log/test`);
        assert.deepEqual(res.body.data, { target: "log", outcome: "delivered", attempts: 1 });
        assert.equal(lines.length, 1);
        assert.equal(JSON.parse(lines[0]).event.type, "target.test");
      });

      await t.step("a failed test answers the summary; a blocked address is named", async () => {
        const url = `http://127.0.0.1:${closedPort()}/x/refused-SECRET`;
        secrets.push("refused-SECRET");
        await api.post(PATH, { name: "gone", kind: "discord", url });
        const res = await api.post(`${PATH}/gone/test`);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.data, {
          target: "gone",
          outcome: "failed",
          attempts: 1,
          error: "connection refused",
        });
        await api.post(PATH, {
          name: "meta",
          kind: "slack",
          url: "http://169.254.169.254/x/meta-SECRET",
        });
        secrets.push("meta-SECRET");
        const blocked = await api.post(`${PATH}/meta/test`);
        assert.deepEqual(blocked.body.data, {
          target: "meta",
          outcome: "failed",
          attempts: 0,
          error: "blocked: 169.254.169.254 is link-local (not in PROBE_ALLOW_NETWORKS)",
        });
      });

      await t.step("the test takes no input: a body with fields is a 422", async () => {
        const res = await api.post("/trpc/targets.test", { name: "log", x: 1 });
        assert.equal(res.status, 422);
        assert.deepEqual(res.body.error.data.error.details, [{
          path: "x",
          message: "is not a known field",
        }]);
        const ok = await api.post("/trpc/targets.test", { name: "log" });
        assert.equal(ok.body.result.data.data.outcome, "delivered");
      });

      await t.step("no answer, log line or error text holds a secret", async () => {
        const answers = [
          await api.get(PATH),
          await api.get(`${PATH}/ops-hook`),
          await api.get(`${PATH}/chat`),
          await api.patch(`${PATH}/chat`, { url: slackUrl }),
          await api.patch(`${PATH}/ops-hook`, { secret: "whsec_bad" }),
          await api.post(PATH, { name: "chat", kind: "slack", url: slackUrl }),
          await api.get(`/trpc/targets.list`),
        ];
        const texts = [...answers.map((a) => a.text), ...logged, ...lines];
        assert.ok(logged.length > 0, "the requests were logged");
        for (const secret of secrets) {
          for (const text of texts) assert.ok(!text.includes(secret), `${secret} in ${text}`);
        }
      });
    } finally {
      await app.close();
      await hook.close();
      await chat.close();
      await smtp.close();
    }
  });
}
