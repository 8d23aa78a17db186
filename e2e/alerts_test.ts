/**
 * Alerting tried as a new user would (issue 11, "Done when"): the real server (`server/main.ts`)
 * in a subprocess, on a fresh embedded database and, when TEST_DATABASE_URL is set, on a fresh
 * PostgreSQL database; notification targets created through the REST API and pointed at local
 * receivers (a signed webhook, Slack- and Discord-shaped calls, mail through a real SMTP server)
 * next to the built-in log target; a probe with `expect` on a local target that starts failing,
 * recovers, then fails in a maintenance window.
 */
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { createPostgresDatabase } from "../server/testing/app.ts";
import {
  isListeningLine,
  restCall,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import {
  type ArrivedMail,
  smtpServer,
  TEST_TLS_CERT,
  webhookReceiver,
} from "../server/testing/receivers.ts";
import { startTarget } from "../server/testing/target_server.ts";

const KEY = "alerts-e2e-key-0123456789";

/** The environment a fresh clone would have, plus the given variables. */
function env(vars: Record<string, string>): Record<string, string> {
  const keep = ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"];
  const base = Object.fromEntries(
    keep.flatMap((k) => Deno.env.get(k) !== undefined ? [[k, Deno.env.get(k)!]] : []),
  );
  return { ...base, ...vars };
}

/** A line of the server's log, parsed; other text as `{ text }`. */
function parse(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

/** Gives up on a step that takes far longer than it should, rather than hanging the suite. */
function guard<T>(
  work: Promise<T>,
  what: string,
  state: () => string = () => "",
  ms = 20_000,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not all in ${ms} ms; ${state()}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Resolves once `ready()` holds (looked at every 25 ms); rejects after `ms`. */
async function until(ready: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`${what}: not so after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

// deno-lint-ignore no-explicit-any
type Json = any;

/** A REST call with the API key: the status and the parsed body. */
const call = (server: ServerProcess, method: string, path: string, body?: unknown) =>
  restCall(server, KEY, method, path, body);

/** The `Subject:` header of a mail as it arrived (headers may be folded). */
function subjectOf(mail: ArrivedMail): string {
  const head = mail.message.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, " ");
  return /^Subject: (.*)$/mi.exec(head)?.[1] ?? "";
}

/** The log target's `"msg":"alert"` lines, parsed, in the order they were printed. */
function alertLines(server: ServerProcess): Json[] {
  return server.lines
    .filter((l) => l.stream === "stdout" && l.text.includes('"msg":"alert"'))
    .map((l) => parse(l.text));
}

async function scenario(database: Record<string, string>) {
  const dataDir = await Deno.makeTempDir({ prefix: "alerts-e2e-" });
  const target = await startTarget();
  const hook = webhookReceiver([200]);
  const slack = webhookReceiver([200]);
  const discord = webhookReceiver([200]);
  const smtp = await smtpServer();
  let server: ServerProcess | undefined;
  try {
    server = await startServerProcess({
      env: env({
        ...database,
        DATA_DIR: dataDir,
        SERVICE_API_KEY: KEY,
        // The target and the receivers are on loopback, which the outbound policy refuses.
        PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
        // A new probe runs once when created, then a day later: the other runs are run-now's.
        PROBE_INTERVAL_SECONDS: "86400",
        // The SMTP server offers STARTTLS with the test certificate: nodemailer takes TLS options
        // from the URL's query, so the server process trusts it as an operator's private CA.
        SMTP_URL: `${smtp.url()}/?tls.ca=${encodeURIComponent(TEST_TLS_CERT)}`,
        MAIL_FROM: "Probe monitor <monitor@example.test>",
        // Required with SMTP_URL (it is also the I'm alive mail's); mail targets have their own.
        MAIL_TO: "iam-alive@example.test",
      }),
      clearEnv: true,
      output: "capture",
      readyLine: isListeningLine,
    });
    const s = server;
    /** What has arrived where, and what the server said about it, for a failure's message. */
    const seen = () =>
      `webhook ${hook.received.length}, slack ${slack.received.length}, discord ${discord.received.length}, ` +
      `mail ${smtp.arrived.length}, log ${alertLines(s).length}; server output:\n${
        s.lines.filter((l) => !l.text.includes('"msg":"request"')).map((l) => l.text).join("\n")
      }`;

    // Targets, as the docs show them. The webhook's key is returned once, by the create.
    const created = await call(s, "POST", "/notification-targets", {
      name: "ops-hook",
      kind: "webhook",
      url: hook.url,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const secret: string = created.body.data.secret;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    for (
      const body of [
        { name: "team-slack", kind: "slack", url: slack.url },
        { name: "team-discord", kind: "discord", url: discord.url },
        { name: "oncall", kind: "mail", recipients: ["oncall@example.test"] },
      ]
    ) {
      const answer = await call(s, "POST", "/notification-targets", body);
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
    }
    const read = await call(s, "GET", "/notification-targets/ops-hook");
    assert.notEqual(read.body.data.secret, secret);
    const targets = ["log", "ops-hook", "team-slack", "team-discord", "oncall"];
    const policy = await call(s, "PATCH", "/settings/alerts", {
      targets,
      failure_threshold: 1,
      success_threshold: 1,
    });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    assert.deepEqual(policy.body.data.targets, targets);
    assert.equal(policy.body.data.enabled, true);

    // A probe that says what "working" means.
    assert.equal((await call(s, "POST", "/projects", { project: "shop" })).status, 201);
    const probe = await call(s, "POST", "/projects/shop/probes", {
      url: `${target.origin}/health`,
      label: "Shop health",
      expect: { status: ["2xx"], json: [{ path: "/status", op: "eq", value: "UP" }] },
    });
    assert.equal(probe.status, 201, JSON.stringify(probe.body));
    const probePath = `/projects/shop/probes/${probe.body.data.probe_id}`;

    const healthy = await call(s, "POST", `${probePath}/run`);
    assert.equal(healthy.status, 200, JSON.stringify(healthy.body));
    assert.equal(healthy.body.data.outcome, "up");
    assert.deepEqual(healthy.body.data.failed_checks, []);
    assert.equal(healthy.body.data.trigger, "manual");

    // The service answers 200 but says it is down: only the assertion sees it.
    target.setHealth(200, { status: "DOWN" });
    const failing = await call(s, "POST", `${probePath}/run`);
    assert.equal(failing.status, 200, JSON.stringify(failing.body));
    assert.equal(failing.body.data.outcome, "down");
    assert.equal(failing.body.data.http_status, 200);
    assert.deepEqual(failing.body.data.failed_checks.map((c: Json) => c.check), ["json.0"]);
    assert.match(failing.body.data.failed_checks[0].seen, /DOWN/);
    assert.equal(failing.body.data.in_maintenance, false);

    // One incident; one notification on each target.
    const open = await call(s, "GET", "/incidents?state=open");
    assert.equal(open.body.data.length, 1, JSON.stringify(open.body));
    const incident = open.body.data[0];
    assert.equal(incident.project, "shop");
    assert.equal(incident.label, "Shop health");
    await guard(
      Promise.all([
        hook.arrived(1),
        slack.arrived(1),
        discord.arrived(1),
        until(() => smtp.arrived.length >= 1, "the mail"),
        until(() => alertLines(s).length >= 1, "the log line"),
      ]),
      "the DOWN notifications",
      seen,
    );
    const acknowledged = await call(s, "POST", `/incidents/${incident.id}/acknowledge`);
    assert.equal(acknowledged.status, 200, JSON.stringify(acknowledged.body));
    assert.notEqual(acknowledged.body.data.acknowledged_at, null);
    // Each target told of the incident is told it is acknowledged.
    await guard(
      Promise.all([
        hook.arrived(2),
        slack.arrived(2),
        discord.arrived(2),
        until(() => smtp.arrived.length >= 2, "the mail"),
        until(() => alertLines(s).length >= 2, "the log line"),
      ]),
      "the ACKNOWLEDGED notifications",
      seen,
    );

    // Recovery resolves it, with one "recovered" on each target.
    target.setHealth(200, { status: "UP" });
    const recovered = await call(s, "POST", `${probePath}/run`);
    assert.equal(recovered.body.data.outcome, "up");
    await guard(
      Promise.all([
        hook.arrived(3),
        slack.arrived(3),
        discord.arrived(3),
        until(() => smtp.arrived.length >= 3, "the mail"),
        until(() => alertLines(s).length >= 3, "the log line"),
      ]),
      "the RECOVERED notifications",
      seen,
    );
    const resolved = await call(s, "GET", `/incidents/${incident.id}`);
    assert.equal(resolved.body.data.state, "resolved");
    assert.equal(resolved.body.data.resolution, "recovered");
    assert.equal((await call(s, "GET", "/incidents?state=open")).body.data.length, 0);

    // A maintenance window covering now silences failures: runs are recorded, nothing opens.
    const now = Date.now();
    const window = await call(s, "POST", "/projects/shop/maintenance", {
      starts_at: new Date(now - 60_000).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
      reason: "deploy",
    });
    assert.equal(window.status, 201, JSON.stringify(window.body));
    target.setHealth(503, { status: "DOWN" });
    for (let i = 0; i < 2; i++) {
      const silenced = await call(s, "POST", `${probePath}/run`);
      assert.equal(silenced.body.data.outcome, "down");
      assert.equal(silenced.body.data.in_maintenance, true);
    }
    assert.equal((await call(s, "GET", "/incidents")).body.data.length, 1);
    // The results say which runs were in the window (a new probe's first scheduled run, made
    // when it was created, may be among them, outside the window).
    const results = (await call(s, "GET", `${probePath}/results`)).body.data;
    assert.deepEqual(
      results.filter((r: Json) => r.trigger === "manual")
        .map((r: Json) => [r.outcome, r.in_maintenance]),
      [["down", true], ["down", true], ["up", false], ["down", false], ["up", false]],
    );
    // A window changes nothing recorded before it was added.
    const added = Date.parse(window.body.data.created_at);
    for (const r of results) {
      assert.equal(r.in_maintenance, Date.parse(r.started_at) > added, JSON.stringify(r));
    }

    // After the window, the next failure opens an incident and notifies again. Notifications go
    // out in the order they were written, so its arrival shows nothing was sent in the window.
    const deleted = await fetch(
      `${s.url}/api/v1/projects/shop/maintenance/${window.body.data.id}`,
      {
        method: "DELETE",
        headers: { "x-service-api-key": KEY },
      },
    );
    assert.equal(deleted.status, 204);
    const after = await call(s, "POST", `${probePath}/run`);
    assert.equal(after.body.data.in_maintenance, false);
    assert.equal(after.body.data.http_status, 503);
    assert.equal(after.body.data.outcome, "down");
    await guard(
      Promise.all([
        hook.arrived(4),
        slack.arrived(4),
        discord.arrived(4),
        until(() => smtp.arrived.length >= 4, "the mail"),
        until(() => alertLines(s).length >= 4, "the log line"),
      ]),
      "the second DOWN notifications",
      seen,
    );
    const second = (await call(s, "GET", "/incidents?state=open")).body.data;
    assert.equal(second.length, 1);
    assert.notEqual(second[0].id, incident.id);

    // Every target got exactly down, acknowledged, recovered, down: nothing doubled, nothing in
    // the window.
    const expected = ["probe.down", "probe.acknowledged", "probe.recovered", "probe.down"];
    const events = hook.received.map((r) =>
      new Webhook(secret).verify(r.body, Object.fromEntries(r.headers)) as Json
    );
    assert.deepEqual(events.map((e) => e.type), expected);
    assert.equal(events[0].data.incident_id, incident.id);
    assert.equal(events[0].data.label, "Shop health");
    assert.equal(events[0].data.state, "down");
    // In words, with the codes beside them, and a link to the probe's page under the address the
    // server listens at (no PUBLIC_URL set).
    assert.equal(events[0].data.cause, 'JSON /status was "DOWN", expected "UP"');
    assert.equal(events[0].data.error, "assertion failed: json.0");
    assert.equal(events[0].data.url, `${target.origin}/health`);
    assert.equal(events[0].data.link, `${s.url}/#${probePath}`);
    assert.equal(new Set(hook.received.map((r) => r.headers.get("webhook-id"))).size, 4);
    for (const r of slack.received) {
      const message = JSON.parse(r.body);
      assert.equal(typeof message.text, "string");
      assert.ok(Array.isArray(message.blocks) && message.blocks.length > 0);
    }
    assert.deepEqual(
      slack.received.map((r) => JSON.parse(r.body).text.split(" ")[0]),
      ["DOWN", "ACKNOWLEDGED", "RECOVERED", "DOWN"],
    );
    for (const r of discord.received) {
      const message = JSON.parse(r.body);
      assert.equal(typeof message.content, "string");
      assert.ok(Array.isArray(message.embeds) && message.embeds.length === 1);
      assert.ok(Array.isArray(message.embeds[0].fields));
    }
    assert.deepEqual(
      discord.received.map((r) => JSON.parse(r.body).content.split(" ")[0]),
      ["DOWN", "ACKNOWLEDGED", "RECOVERED", "DOWN"],
    );
    assert.deepEqual(smtp.arrived.map((m) => subjectOf(m).split(" ")[0]), [
      "DOWN",
      "ACKNOWLEDGED",
      "RECOVERED",
      "DOWN",
    ]);
    assert.equal(subjectOf(smtp.arrived[0]), "DOWN shop: Shop health");
    assert.deepEqual(smtp.arrived.map((m) => m.to), Array(4).fill(["oncall@example.test"]));
    assert.deepEqual(alertLines(s).map((l) => l.event.type), expected);

    // The outbox agrees: the first incident's fifteen notifications were all delivered, and the
    // webhook's carries the id the receiver saw.
    const first = (await call(s, "GET", `/incidents/${incident.id}`)).body.data;
    assert.equal(first.notifications.length, 15);
    assert.ok(
      first.notifications.every((n: Json) => n.status === "delivered"),
      first.notifications,
    );
    const hookDown = first.notifications.find((n: Json) =>
      n.target === "ops-hook" && n.type === "probe.down"
    );
    assert.equal(hook.received[0].headers.get("webhook-id"), hookDown.id);

    const stopped = await s.stop();
    assert.equal(stopped.code, 0);
    // No secret in anything the server printed: the webhook's key, the Slack and Discord URLs.
    const printed = s.output();
    assert.ok(!printed.includes(secret.slice(6)), "the webhook key was printed");
    assert.ok(!printed.includes("tok-secret"), "a Slack or Discord URL was printed");
  } finally {
    await server?.stop();
    await Promise.all([target.close(), hook.close(), slack.close(), discord.close(), smtp.close()]);
    await Deno.remove(dataDir, { recursive: true });
  }
}

Deno.test("alerts: a failing probe notifies every target once, recovers, and is silenced in maintenance (embedded)", async () => {
  await scenario({});
});

Deno.test({
  name:
    "alerts: a failing probe notifies every target once, recovers, and is silenced in maintenance (PostgreSQL)",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    try {
      await scenario({ DATABASE_URL: url });
    } finally {
      await drop();
    }
  },
});
