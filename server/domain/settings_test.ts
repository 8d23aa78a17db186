import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
import { apiSuite, backends, freshDatabase, TEST_API_KEY, TestClient } from "../testing/app.ts";
import { ManualClock } from "../testing/manual_clock.ts";
import { credentialForms, smtpServer, TRUST_TEST_CERT } from "../testing/receivers.ts";

const PATH = "/api/v1/settings/iam-alive";

// The settings are one global document: these cases run in order on one database.
apiSuite("I'm alive settings", (test) => {
  test("start disabled, every 24 hours, on the log channel", async ({ api }) => {
    const res = await api.get(PATH);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { enabled: false, interval_hours: 24, channels: ["log"] } });
  });

  test("sending interval_hours without enabled turns reporting on", async ({ api }) => {
    const res = await api.patch(PATH, { interval_hours: 6 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { enabled: true, interval_hours: 6, channels: ["log"] } });
    assert.deepEqual((await api.get(PATH)).body, res.body);
  });

  test("enabled can be switched off alone, and stays off when sent with other fields", async ({ api }) => {
    let res = await api.patch(PATH, { enabled: false });
    assert.deepEqual(res.body.data, { enabled: false, interval_hours: 6, channels: ["log"] });
    res = await api.patch(PATH, { enabled: false, channels: ["mail", "webhook"] });
    assert.deepEqual(res.body.data, {
      enabled: false,
      interval_hours: 6,
      channels: ["mail", "webhook"],
    });
  });

  test("sending channels without enabled turns reporting on", async ({ api }) => {
    const res = await api.patch(PATH, { channels: ["webhook", "log", "mail"] });
    assert.deepEqual(res.body.data, {
      enabled: true,
      interval_hours: 6,
      channels: ["webhook", "log", "mail"],
    });
  });

  test("invalid patches answer 422 and change nothing, not even their valid fields", async ({ api }) => {
    await api.patch(PATH, { enabled: false, interval_hours: 3, channels: ["log"] });
    const before = (await api.get(PATH)).body;
    const cases: [unknown, string][] = [
      [{}, "No fields were provided"],
      [{ interval_hours: 0 }, "Validation failed"],
      [{ interval_hours: 25, channels: ["mail"] }, "Validation failed"],
      [{ interval_hours: 1.5 }, "Validation failed"],
      [{ interval_hours: "5" }, "Validation failed"],
      [{ enabled: "false" }, "Validation failed"],
      [{ enabled: 1 }, "Validation failed"],
      [{ channels: [] }, "Validation failed"],
      [{ channels: ["log", "log"] }, "Validation failed"],
      [{ channels: ["sms"], interval_hours: 2 }, "Validation failed"],
      [{ channels: "log" }, "Validation failed"],
      [{ enabled: true, colour: "red" }, "Validation failed"],
    ];
    for (const [body, message] of cases) {
      const res = await api.patch(PATH, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.code, "validation_failed");
      assert.equal(res.body.error.message, message);
      if (message === "Validation failed") assert.ok(res.body.error.details.length > 0);
    }
    assert.deepEqual((await api.get(PATH)).body, before);
  });

  test("the bounds 1 and 24 are accepted", async ({ api }) => {
    assert.equal((await api.patch(PATH, { interval_hours: 1 })).body.data.interval_hours, 1);
    assert.equal((await api.patch(PATH, { interval_hours: 24 })).body.data.interval_hours, 24);
  });
});

// A hostile SMTP server refuses the login with a reply that echoes the base64 of the AUTH line
// (and the user and password in every other form). The delivery error is a summary built from
// codes: stored, logged and answered, it holds none of that.
for (const backend of backends()) {
  Deno.test(`I'm alive: a hostile SMTP server's text reaches neither the database, the API nor the log [${backend}]`, async () => {
    const user = "hostile-user-7f3a";
    const password = "Pa55:w0rd/with space";
    const smtp = await smtpServer({ hostile: "auth" });
    const lines: string[] = [];
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("debug", (line) => lines.push(line)),
      config: {
        iamAlive: {
          mail: {
            smtpUrl: smtp.url("smtp", password, user),
            from: "sender@example.test",
            to: ["ops@example.test"],
          },
        },
      },
      iamAlive: { mailTls: TRUST_TEST_CERT, writeLine: (line) => lines.push(line) },
      clock: new ManualClock(),
    });
    const api = new TestClient(app.handler);
    try {
      assert.equal((await api.patch(PATH, { channels: ["mail"] })).status, 200);
      const sent = await api.post(`${PATH}/test`, {});
      assert.equal(sent.status, 200);
      assert.deepEqual(
        sent.body.data.deliveries.map((d: { outcome: string; error: string }) => [
          d.outcome,
          d.error,
        ]),
        [["failed", "smtp: authentication failed (535)"]],
      );
      // The bait was laid: the server's reply held the base64 of AUTH PLAIN.
      const authPlain = Buffer.from(`\0${user}\0${password}`).toString("base64");
      assert.ok(smtp.echoed.some((reply) => reply.includes(authPlain)));

      const listed = await api.get(`${PATH}/deliveries`);
      assert.equal(listed.body.data[0].error, "smtp: authentication failed (535)");
      const trpc = await api.get(
        `/trpc/settings.listIamAliveDeliveries?input=${encodeURIComponent("{}")}`,
      );
      assert.equal(trpc.status, 200);
      const stored = await app.database.db.selectFrom("iam_alive_deliveries").selectAll()
        .execute();
      assert.equal(stored.length, 1);
      assert.ok(lines.some((line) => line.includes("smtp: authentication failed (535)")));

      const everything = [
        sent.text,
        listed.text,
        trpc.text,
        JSON.stringify(stored),
        ...lines,
      ].join("\n");
      for (const form of credentialForms(user, password)) {
        assert.ok(!everything.includes(form), `${form} leaked`);
      }
    } finally {
      await app.close();
      await smtp.close();
    }
  });
}
