import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { sendMail, summarizeMailError } from "./mail.ts";
import {
  closedPort,
  credentialForms,
  type HostilePhase,
  SMTP_PASSWORD,
  SMTP_USER,
  smtpServer,
  TEST_TLS_CERT,
  TRUST_TEST_CERT,
} from "../../testing/receivers.ts";

Deno.test("mail: the message arrives over STARTTLS with the right sender, recipients and text", async () => {
  const server = await smtpServer();
  try {
    const result = await sendMail({
      smtpUrl: server.url(),
      from: "Probe monitor <monitor@example.test>",
      to: ["ops@example.test", "oncall@example.test"],
      tls: TRUST_TEST_CERT,
    }, { subject: "I'm alive #3", text: "The probe service is alive.\nsequence 3\n" });
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    assert.equal(server.arrived.length, 1);
    const mail = server.arrived[0];
    assert.equal(mail.from, "monitor@example.test");
    assert.deepEqual(mail.to, ["ops@example.test", "oncall@example.test"]);
    assert.equal(mail.secure, true, "the session was upgraded with STARTTLS");
    assert.equal(mail.user, SMTP_USER);
    assert.match(mail.message, /^From: Probe monitor <monitor@example\.test>\r$/m);
    assert.match(mail.message, /^To: ops@example\.test, oncall@example\.test\r$/m);
    assert.match(mail.message, /^Subject: I'm alive #3\r$/m);
    assert.match(mail.message, /The probe service is alive\.\r\nsequence 3/);
  } finally {
    await server.close();
  }
});

Deno.test("mail: smtps:// speaks TLS from the first byte", async () => {
  const server = await smtpServer({ secureOnly: true });
  try {
    const result = await sendMail({
      smtpUrl: server.url("smtps"),
      from: "monitor@example.test",
      to: ["ops@example.test"],
      tls: TRUST_TEST_CERT,
    }, { subject: "s", text: "t" });
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    assert.equal(server.arrived[0].secure, true);
  } finally {
    await server.close();
  }
});

Deno.test("mail: a certificate the client does not trust fails the delivery", async () => {
  const server = await smtpServer();
  try {
    const result = await sendMail({
      smtpUrl: server.url(),
      from: "monitor@example.test",
      to: ["ops@example.test"],
    }, { subject: "s", text: "t" });
    assert.deepEqual(result, {
      outcome: "failed",
      attempts: 1,
      error: "tls: certificate not trusted",
    });
    assert.equal(server.arrived.length, 0);
  } finally {
    await server.close();
  }
});

Deno.test("mail: a refused login fails without naming the credentials", async () => {
  const server = await smtpServer();
  try {
    const wrong = "wrong-passw0rd";
    const result = await sendMail({
      smtpUrl: server.url("smtp", wrong),
      from: "monitor@example.test",
      to: ["ops@example.test"],
      tls: TRUST_TEST_CERT,
    }, { subject: "s", text: "t" });
    assert.deepEqual(result, {
      outcome: "failed",
      attempts: 1,
      error: "smtp: authentication failed (535)",
    });
    assert.equal(server.arrived.length, 0);
  } finally {
    await server.close();
  }
});

Deno.test("mail: no server at the address fails the delivery", async () => {
  const result = await sendMail({
    smtpUrl: `smtp://${SMTP_USER}:${encodeURIComponent(SMTP_PASSWORD)}@127.0.0.1:${closedPort()}`,
    from: "monitor@example.test",
    to: ["ops@example.test"],
  }, { subject: "s", text: "t" });
  assert.deepEqual(result, { outcome: "failed", attempts: 1, error: "smtp: connection refused" });
});

Deno.test("mail: a certificate for another name fails as a name mismatch", async () => {
  const server = await smtpServer();
  try {
    const result = await sendMail({
      smtpUrl: server.url(),
      from: "monitor@example.test",
      to: ["ops@example.test"],
      tls: { ca: TEST_TLS_CERT, servername: "other.test" },
    }, { subject: "s", text: "t" });
    assert.equal(result.error, "tls: certificate does not match the host name");
  } finally {
    await server.close();
  }
});

// A hostile server fills its replies as it likes: here with the credentials it was sent, in
// every form (base64 of AUTH PLAIN and AUTH LOGIN, plain, URL-encoded). The error is a summary
// built from codes, so none of it may come through, at whatever phase the server fails.
const HOSTILE_USER = "hostile-user-7f3a";
const HOSTILE_PASSWORD = "Pa55:w0rd/with space";
const hostileCases: [HostilePhase, string][] = [
  ["auth", "smtp: authentication failed (535)"],
  ["mail", "smtp: sender refused (451)"],
  ["rcpt", "smtp: recipients refused (550)"],
  ["data", "smtp: message refused (554)"],
];
for (const [phase, summary] of hostileCases) {
  Deno.test(`mail: a hostile server failing ${phase} with the credentials echoed gives "${summary}" and nothing of its text`, async () => {
    const server = await smtpServer({ hostile: phase });
    try {
      const result = await sendMail({
        smtpUrl: server.url("smtp", HOSTILE_PASSWORD, HOSTILE_USER),
        from: "sender@example.test",
        to: ["ops@example.test"],
        tls: TRUST_TEST_CERT,
      }, { subject: "s", text: "t" });
      assert.deepEqual(result, { outcome: "failed", attempts: 1, error: summary });
      // The bait was laid: the server's reply did hold the base64 of the login.
      assert.equal(server.echoed.length, 1);
      const plain = Buffer.from(`\0${HOSTILE_USER}\0${HOSTILE_PASSWORD}`).toString("base64");
      assert.ok(server.echoed[0].includes(plain));
      for (const form of credentialForms(HOSTILE_USER, HOSTILE_PASSWORD)) {
        assert.ok(!result.error!.includes(form), `the error holds ${form}`);
      }
    } finally {
      await server.close();
    }
  });
}

Deno.test("mail: summaries are built from codes only, whatever the message says", () => {
  const secret = "AG1vbml0b3IAczNjcmV0";
  const cases: [Record<string, unknown>, string][] = [
    [
      { code: "EAUTH", responseCode: 535, response: `535 ${secret}` },
      "smtp: authentication failed (535)",
    ],
    [{ code: "EAUTH", responseCode: "535 x" }, "smtp: authentication failed"],
    [{ code: "ESOCKET", originalCode: "ECONNREFUSED" }, "smtp: connection refused"],
    [
      { code: "ESOCKET", originalCode: "DEPTH_ZERO_SELF_SIGNED_CERT" },
      "tls: certificate not trusted",
    ],
    [
      { code: "ESOCKET", originalCode: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" },
      "tls: certificate not trusted",
    ],
    [{ code: "ESOCKET", originalCode: "CERT_HAS_EXPIRED" }, "tls: certificate expired"],
    [{ code: "ESOCKET", originalCode: "ERR_SSL_WRONG_VERSION_NUMBER" }, "tls: handshake failed"],
    [{ code: "ESOCKET", originalCode: `E ${secret}` }, "smtp: network error"],
    [{ code: "EDNS", originalCode: "ENOTFOUND" }, "smtp: host not found"],
    [{ code: "ETIMEDOUT" }, "smtp: timed out"],
    [
      { code: "EPROTOCOL", responseCode: 554, response: `554 ${secret}` },
      "smtp: unexpected reply (554)",
    ],
    [{ code: "ETLS", responseCode: 454 }, "tls: STARTTLS failed (454)"],
    [{ code: "ECONNECTION" }, "smtp: connection closed unexpectedly"],
    [{ code: "EWHATEVER" }, "smtp: failed (EWHATEVER)"],
    [{ code: secret.toLowerCase() }, "smtp: failed"],
  ];
  for (const [fields, summary] of cases) {
    const error = Object.assign(new Error(`Invalid login: ${secret}`), fields);
    assert.equal(summarizeMailError(error), summary, JSON.stringify(fields));
  }
  assert.equal(summarizeMailError(secret), "smtp: failed");
  assert.equal(summarizeMailError(null), "smtp: failed");
});
