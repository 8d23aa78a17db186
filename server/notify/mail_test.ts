import assert from "node:assert/strict";
import { sendMail } from "./mail.ts";
import {
  closedPort,
  SMTP_PASSWORD,
  SMTP_USER,
  smtpServer,
  TRUST_TEST_CERT,
} from "../testing/receivers.ts";

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
    assert.equal(result.outcome, "failed");
    assert.match(result.error!, /certificate/);
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
    assert.equal(result.outcome, "failed");
    assert.equal(result.attempts, 1);
    assert.match(result.error!, /EAUTH/);
    assert.doesNotMatch(result.error!, new RegExp(`${wrong}|${SMTP_USER}`));
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
  assert.equal(result.outcome, "failed");
  assert.match(result.error!, /ECONNREFUSED|ECONNECTION/);
  assert.doesNotMatch(result.error!, /p@ss/);
});
