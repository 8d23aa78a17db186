import assert from "node:assert/strict";
import type { HostilePhase } from "../../../testing/receivers.ts";
import { smtpServer, TRUST_TEST_CERT } from "../../../testing/receivers.ts";
import { createNetworkPolicy } from "../../../base/outbound/network_policy.ts";
import { createSender } from "../sender.ts";
import { testEvent } from "../targets.ts";
import { mail } from "./mail.ts";

const message = { type: "alert" as const, id: "msg_1", event: testEvent("oncall", new Date()) };

/** The mail provider's request for `to`, sent through the one sender to `smtpUrl`. */
function sendTo(smtpUrl: string | null, to: string[]) {
  const send = createSender({
    policy: createNetworkPolicy(),
    userAgent: "probe-service/test",
    ...(smtpUrl && { mail: { smtpUrl, from: "monitor@example.test", tls: TRUST_TEST_CERT } }),
  });
  return send(mail, mail.request({ recipients: to }, message, { now: new Date() }));
}

Deno.test("mail provider: the event becomes one plain-text mail to the target's recipients", async () => {
  const server = await smtpServer();
  try {
    const request = mail.request({ recipients: ["ops@example.test"] }, message, {
      now: new Date(),
    });
    assert.equal(request.transport, "mail");
    assert.deepEqual(await sendTo(server.url(), ["ops@example.test", "oncall@example.test"]), {
      outcome: "delivered",
      attempts: 1,
    });
    assert.deepEqual(server.arrived[0].to, ["ops@example.test", "oncall@example.test"]);
    assert.match(server.arrived[0].message, /Subject: TEST probe-service: test of target oncall/);
  } finally {
    await server.close();
  }
});

// A 5xx refusal of the recipients or the message is given up; a 4xx, or a login refused (the
// operator may mend SMTP_URL), is retried.
const cases: [HostilePhase, string, boolean][] = [
  ["rcpt", "smtp: recipients refused (550)", true],
  ["data", "smtp: message refused (554)", true],
  ["mail", "smtp: sender refused (451)", false],
  ["auth", "smtp: authentication failed (535)", false],
];
for (const [phase, error, final] of cases) {
  Deno.test(`mail provider: a server failing ${phase} is ${final ? "given up" : "retried"}`, async () => {
    const server = await smtpServer({ hostile: phase });
    try {
      assert.deepEqual(await sendTo(server.url("smtp", "pw", "user"), ["ops@example.test"]), {
        outcome: "failed",
        attempts: 1,
        error,
        ...(final && { final: true }),
      });
    } finally {
      await server.close();
    }
  });
}

Deno.test("mail provider: without SMTP settings nothing is sent and the answer names them", async () => {
  assert.deepEqual(await sendTo(null, ["ops@example.test"]), {
    outcome: "not_configured",
    attempts: 0,
    error: "not configured: SMTP_URL, MAIL_FROM",
  });
});
