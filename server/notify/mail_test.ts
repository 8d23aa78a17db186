import assert from "node:assert/strict";
import { SMTPServer } from "smtp-server";
import { sendMail } from "./mail.ts";

const KEY = await Deno.readTextFile(new URL("./testdata/localhost.key", import.meta.url));
const CERT = await Deno.readTextFile(new URL("./testdata/localhost.crt", import.meta.url));
const USER = "monitor";
const PASSWORD = "s3cret p@ss/word";

interface Arrived {
  from: string;
  to: string[];
  secure: boolean;
  user: unknown;
  message: string;
}

/** A real SMTP server on 127.0.0.1: STARTTLS offered with the test certificate, login required. */
async function smtpServer(options: { secureOnly?: boolean } = {}) {
  const arrived: Arrived[] = [];
  const server = new SMTPServer({
    key: KEY,
    cert: CERT,
    secure: options.secureOnly ?? false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASSWORD) callback(null, { user: USER });
      else callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
      stream.on("end", () => {
        const envelope = session.envelope;
        arrived.push({
          from: envelope.mailFrom ? envelope.mailFrom.address : "",
          to: envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: session.user,
          message: new TextDecoder().decode(Buffer.concat(chunks)),
        });
        callback();
      });
    },
  });
  // A client that drops the connection is the client's problem, not the test's.
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    port,
    arrived,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const credentials = (password = PASSWORD) =>
  `${encodeURIComponent(USER)}:${encodeURIComponent(password)}`;

Deno.test("mail: the message arrives over STARTTLS with the right sender, recipients and text", async () => {
  const server = await smtpServer();
  try {
    const result = await sendMail({
      smtpUrl: `smtp://${credentials()}@127.0.0.1:${server.port}`,
      from: "Probe monitor <monitor@example.test>",
      to: ["ops@example.test", "oncall@example.test"],
      tls: { ca: CERT, servername: "localhost" },
    }, { subject: "I'm alive #3", text: "The probe service is alive.\nsequence 3\n" });
    assert.deepEqual(result, { outcome: "delivered", attempts: 1 });
    assert.equal(server.arrived.length, 1);
    const mail = server.arrived[0];
    assert.equal(mail.from, "monitor@example.test");
    assert.deepEqual(mail.to, ["ops@example.test", "oncall@example.test"]);
    assert.equal(mail.secure, true, "the session was upgraded with STARTTLS");
    assert.equal(mail.user, USER);
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
      smtpUrl: `smtps://${credentials()}@127.0.0.1:${server.port}`,
      from: "monitor@example.test",
      to: ["ops@example.test"],
      tls: { ca: CERT, servername: "localhost" },
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
      smtpUrl: `smtp://${credentials()}@127.0.0.1:${server.port}`,
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
      smtpUrl: `smtp://${credentials(wrong)}@127.0.0.1:${server.port}`,
      from: "monitor@example.test",
      to: ["ops@example.test"],
      tls: { ca: CERT, servername: "localhost" },
    }, { subject: "s", text: "t" });
    assert.equal(result.outcome, "failed");
    assert.equal(result.attempts, 1);
    assert.match(result.error!, /EAUTH/);
    assert.doesNotMatch(result.error!, new RegExp(`${wrong}|${USER}`));
    assert.equal(server.arrived.length, 0);
  } finally {
    await server.close();
  }
});

Deno.test("mail: no server at the address fails the delivery", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const result = await sendMail({
    smtpUrl: `smtp://${credentials()}@127.0.0.1:${port}`,
    from: "monitor@example.test",
    to: ["ops@example.test"],
  }, { subject: "s", text: "t" });
  assert.equal(result.outcome, "failed");
  assert.match(result.error!, /ECONNREFUSED|ECONNECTION/);
  assert.doesNotMatch(result.error!, /p@ss/);
});
