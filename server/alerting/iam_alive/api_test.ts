import { iamAliveReport } from "@probe/shared";
import assert from "node:assert/strict";
import { generateOpenApiDocument } from "trpc-to-openapi";
import { createDeliverer } from "../deliverer.ts";
import { createDispatch } from "../dispatch.ts";
import { backoffMs } from "../outbox/outbox.ts";
import { type App, createApp, type IamAliveOptions } from "../../app.ts";
import { createLogger } from "../../base/log.ts";
import { type Clock, systemClock } from "../../base/clock.ts";
import type { IamAliveConfig } from "../../base/config.ts";
import { smtpServer, TRUST_TEST_CERT, webhookReceiver } from "../../testing/receivers.ts";
import { toApiError } from "../../procedures/errors.ts";
import { createContext } from "../../procedures/context.ts";
import { createCallerFactory } from "../../procedures/init.ts";
import { appRouter } from "../../procedures/router.ts";
import {
  type Backend,
  backends,
  freshDatabase,
  TEST_API_KEY,
  TestClient,
} from "../../testing/app.ts";
import { ManualClock } from "../../testing/manual_clock.ts";

const SECRET = "whsec-api-test-0123456789";
const TEST_PATH = "/api/v1/settings/iam-alive/test";
const DELIVERIES_PATH = "/api/v1/settings/iam-alive/deliveries";

async function appWith(
  backend: Backend,
  { config, clock, ...iamAlive }: IamAliveOptions & { config?: IamAliveConfig; clock?: Clock },
): Promise<App> {
  return await createApp({
    database: await freshDatabase(backend),
    apiKeys: [TEST_API_KEY],
    log: createLogger("silent"),
    config: { iamAlive: config },
    clock,
    iamAlive,
  });
}

for (const backend of backends()) {
  Deno.test(`I'm alive endpoints [${backend}]`, async (t) => {
    const hook = webhookReceiver([200], { secret: SECRET });
    const smtp = await smtpServer();
    const lines: string[] = [];
    const clock = new ManualClock();
    const app = await appWith(backend, {
      config: {
        webhook: { url: hook.url, secret: SECRET },
        mail: {
          smtpUrl: smtp.url(),
          from: "monitor@example.test",
          to: ["ops@example.test", "oncall@example.test"],
        },
      },
      mailTls: TRUST_TEST_CERT,
      writeLine: (line) => lines.push(line),
      clock,
      instanceId: "api-test",
    });
    const api = new TestClient(app.handler);
    try {
      await t.step("both endpoints want the API key", async () => {
        assert.equal((await api.post(TEST_PATH, {}, { key: null })).status, 401);
        assert.equal((await api.get(DELIVERIES_PATH, { key: "wrong-key-123" })).status, 401);
        assert.equal(hook.received.length, 0);
      });

      await t.step(
        "a test sends one report over each selected channel and answers each outcome",
        async () => {
          const patched = await api.patch("/api/v1/settings/iam-alive", {
            channels: ["log", "webhook", "mail"],
          });
          assert.equal(patched.status, 200);
          const res = await api.post(TEST_PATH, {});
          assert.equal(res.status, 200);
          const { report, deliveries } = res.body.data;
          assert.equal(iamAliveReport.safeParse(report).success, true);
          assert.equal(report.trigger, "test");
          assert.equal(report.instance_id, "api-test");
          assert.deepEqual(
            deliveries.map((d: { channel: string; outcome: string; attempts: number }) => [
              d.channel,
              d.outcome,
              d.attempts,
            ]),
            [["log", "delivered", 1], ["webhook", "delivered", 1], ["mail", "delivered", 1]],
          );

          // The log line, the webhook body and the mail all carry the same report.
          assert.equal(lines.length, 1);
          assert.deepEqual(JSON.parse(lines[0]).report, report);
          assert.equal(hook.received.length, 1);
          assert.equal(hook.received[0].signatureValid, true);
          assert.deepEqual(JSON.parse(hook.received[0].body), report);
          assert.equal(hook.received[0].headers.get("idempotency-key"), String(report.sequence));
          assert.equal(smtp.arrived.length, 1);
          assert.equal(smtp.arrived[0].from, "monitor@example.test");
          assert.deepEqual(smtp.arrived[0].to, ["ops@example.test", "oncall@example.test"]);
          assert.match(
            smtp.arrived[0].message,
            new RegExp(`Subject: I'm alive #${report.sequence} \\(test\\)`),
          );
          assert.match(smtp.arrived[0].message, /"type": "iam_alive"/);
        },
      );

      await t.step("the deliveries list is newest first and honours the limit", async () => {
        const all = await api.get(DELIVERIES_PATH);
        assert.equal(all.status, 200);
        assert.equal(all.body.meta.count, 3);
        assert.deepEqual(all.body.data.map((d: { outcome: string }) => d.outcome), [
          "delivered",
          "delivered",
          "delivered",
        ]);
        assert.deepEqual(Object.keys(all.body.data[0]).sort(), [
          "attempts",
          "channel",
          "duration_ms",
          "error",
          "instance_id",
          "outcome",
          "sequence",
          "time",
          "trigger",
        ]);

        await api.post(TEST_PATH, {});
        const two = await api.get(`${DELIVERIES_PATH}?limit=2`);
        assert.equal(two.status, 200);
        assert.equal(two.body.data.length, 2);
        assert.deepEqual(two.body.meta, { count: 2 });
        const newest = Math.max(...all.body.data.map((d: { sequence: number }) => d.sequence)) + 1;
        assert.deepEqual(two.body.data.map((d: { sequence: number }) => d.sequence), [
          newest,
          newest,
        ]);

        for (const bad of ["0", "501", "abc", "1.5"]) {
          const res = await api.get(`${DELIVERIES_PATH}?limit=${bad}`);
          assert.equal(res.status, 422, `limit=${bad}`);
          assert.equal(res.body.error.code, "validation_failed");
        }
      });

      await t.step("both procedures answer on /trpc too", async () => {
        const sent = await api.post("/trpc/settings.testIamAlive", {});
        assert.equal(sent.status, 200);
        assert.equal(sent.body.result.data.data.report.type, "iam_alive");
        const input = encodeURIComponent(JSON.stringify({ limit: 1 }));
        const listed = await api.get(`/trpc/settings.listIamAliveDeliveries?input=${input}`);
        assert.equal(listed.status, 200);
        assert.equal(listed.body.result.data.data.length, 1);
        assert.equal(
          listed.body.result.data.data[0].sequence,
          sent.body.result.data.data.report.sequence,
        );
      });
    } finally {
      await app.close();
      await hook.close();
      await smtp.close();
    }
  });

  Deno.test(`I'm alive: a new user's PATCH brings the log line and the webhook call at once [${backend}]`, async () => {
    const hook = webhookReceiver([200], { secret: SECRET });
    const lines: string[] = [];
    const clock = new ManualClock();
    const app = await appWith(backend, {
      config: { webhook: { url: hook.url, secret: SECRET } },
      writeLine: (line) => lines.push(line),
      clock,
    });
    const api = new TestClient(app.handler);
    try {
      await app.reporter.start();
      await clock.sleepsReach(1);
      assert.equal(lines.length + hook.received.length, 0, "reporting starts disabled");

      const patched = await api.patch("/api/v1/settings/iam-alive", {
        channels: ["log", "webhook"],
      });
      assert.deepEqual(patched.body.data, {
        enabled: true,
        interval_hours: 24,
        channels: ["log", "webhook"],
      });
      // No time passes on the reporter's clock: the PATCH itself wakes it, and it queues the
      // report in the outbox; the deliverer (driven by hand here) sends it.
      await clock.sleepsReach(2);
      assert.equal(lines.length + hook.received.length, 0, "nothing is sent inline");
      assert.equal(await app.deliverer.deliverOnce(), 2);
      assert.equal(lines.length, 1);
      const report = JSON.parse(lines[0]).report;
      assert.equal(report.trigger, "schedule");
      assert.equal(hook.received.length, 1);
      assert.equal(hook.received[0].signatureValid, true);
      assert.deepEqual(JSON.parse(hook.received[0].body), report);
      assert.equal(hook.received[0].headers.get("idempotency-key"), String(report.sequence));
      assert.equal(hook.received[0].headers.get("webhook-id"), String(report.sequence));
      const listed = await api.get("/api/v1/settings/iam-alive/deliveries");
      assert.deepEqual(
        listed.body.data.map((d: { channel: string; outcome: string }) => [d.channel, d.outcome])
          .sort(),
        [["log", "delivered"], ["webhook", "delivered"]],
      );
      assert.equal(await app.deliverer.deliverOnce(), 0, "each is sent once");
    } finally {
      await app.close();
      await hook.close();
    }
  });

  Deno.test(`I'm alive: a scheduled webhook that fails is retried with the same key and each attempt is listed [${backend}]`, async () => {
    const hook = webhookReceiver([503, 200], { secret: SECRET });
    const clock = new ManualClock();
    const app = await appWith(backend, {
      config: { webhook: { url: hook.url, secret: SECRET } },
      clock,
      instanceId: "retry-test",
    });
    const api = new TestClient(app.handler);
    // A deliverer of the app's outbox on a clock of the test's (the app's own runs on real time).
    let now = clock.now();
    const deliverer = createDeliverer({
      db: app.database.db,
      send: createDispatch({ notifier: app.notifier, iamAlive: app.reporter }),
      log: createLogger("silent"),
      clock: { ...systemClock, now: () => now },
    });
    try {
      await api.patch("/api/v1/settings/iam-alive", { channels: ["webhook"] });
      const queued = await app.reporter.runDue();
      assert.ok(queued);
      assert.equal(await deliverer.deliverOnce(), 1);
      assert.equal(hook.received.length, 1, "one request per attempt: the outbox retries");
      let listed = await api.get(DELIVERIES_PATH);
      assert.deepEqual(
        listed.body.data.map((d: Record<string, unknown>) => [
          d.sequence,
          d.trigger,
          d.channel,
          d.outcome,
          d.attempts,
          d.error,
        ]),
        [[queued.report.sequence, "schedule", "webhook", "failed", 1, "HTTP 503"]],
      );

      now += backoffMs(1);
      assert.equal(await deliverer.deliverOnce(), 1);
      assert.equal(hook.received.length, 2);
      const [first, second] = hook.received;
      assert.equal(second.body, first.body, "the same report");
      assert.deepEqual(JSON.parse(second.body), queued.report);
      for (const name of ["idempotency-key", "webhook-id"]) {
        assert.equal(first.headers.get(name), String(queued.report.sequence), name);
        assert.equal(second.headers.get(name), first.headers.get(name), name);
      }
      assert.equal(second.signatureValid, true);

      listed = await api.get(DELIVERIES_PATH);
      assert.deepEqual(
        listed.body.data.map((d: Record<string, unknown>) => [d.outcome, d.attempts, d.error]),
        [["delivered", 2, null], ["failed", 1, "HTTP 503"]],
      );
      now += 48 * 3_600_000;
      assert.equal(await deliverer.deliverOnce(), 0, "delivered once, not again");
    } finally {
      await app.close();
      await hook.close();
    }
  });

  Deno.test(`I'm alive: a selected channel without configuration is reported, not fatal [${backend}]`, async () => {
    const lines: string[] = [];
    const app = await appWith(backend, { writeLine: (line) => lines.push(line) });
    const api = new TestClient(app.handler);
    try {
      await api.patch("/api/v1/settings/iam-alive", { channels: ["webhook", "log", "mail"] });
      const res = await api.post(TEST_PATH, {});
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.data.deliveries.map((d: { channel: string; outcome: string; error: string }) => [
          d.channel,
          d.outcome,
          d.error,
        ]),
        [
          ["webhook", "not_configured", "not configured: set IAM_ALIVE_WEBHOOK_URL"],
          ["log", "delivered", null],
          ["mail", "not_configured", "not configured: set SMTP_URL, MAIL_FROM, MAIL_TO"],
        ],
      );
      assert.equal(lines.length, 1);
    } finally {
      await app.close();
    }
  });
}

Deno.test("I'm alive: both endpoints are in the OpenAPI document", () => {
  const doc = generateOpenApiDocument(appRouter, {
    title: "probe service",
    version: "test",
    baseUrl: "http://service.test/api/v1",
  });
  const test = doc.paths?.["/settings/iam-alive/test"]?.post;
  const deliveries = doc.paths?.["/settings/iam-alive/deliveries"]?.get;
  assert.ok(test, "POST /settings/iam-alive/test is documented");
  assert.ok(deliveries, "GET /settings/iam-alive/deliveries is documented");
  const params = (deliveries.parameters ?? []) as { name: string; in: string }[];
  assert.deepEqual(params.map((p) => [p.name, p.in]), [["limit", "query"]]);
});

Deno.test("I'm alive: a context built without a request or a reporter answers the test with 503", async () => {
  const handle = await freshDatabase("pglite");
  try {
    const caller = createCallerFactory(appRouter)(
      createContext({ db: handle.db, authenticated: true }),
    );
    let failure: unknown;
    await caller.settings.testIamAlive({}).catch((e) => failure = e);
    assert.ok(failure, "the call failed");
    assert.deepEqual(toApiError(failure), {
      status: 503,
      body: {
        error: { code: "service_unavailable", message: "I'm alive reporting is not available" },
      },
    });
    assert.deepEqual(await caller.settings.listIamAliveDeliveries({}), {
      data: [],
      meta: { count: 0 },
    });
  } finally {
    await handle.close();
  }
});
