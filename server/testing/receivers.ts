/**
 * Test support for the notification channels: a webhook receiver and an SMTP server, both on
 * 127.0.0.1 and a port of their own, recording what arrives.
 */
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import { SMTPServer } from "smtp-server";

export const TEST_TLS_KEY = await Deno.readTextFile(
  new URL("./testdata/localhost.key", import.meta.url),
);
export const TEST_TLS_CERT = await Deno.readTextFile(
  new URL("./testdata/localhost.crt", import.meta.url),
);
/** TLS options under which a client trusts the test servers. */
export const TRUST_TEST_CERT = { ca: TEST_TLS_CERT, servername: "localhost" };

export const SMTP_USER = "monitor";
export const SMTP_PASSWORD = "s3cret p@ss/word";

/** Checks a signature the way a receiver would, independently of the code under test. */
export function verifySignature(secret: string, headers: Headers, body: string): boolean {
  const timestamp = headers.get("x-timestamp") ?? "";
  const given = headers.get("x-signature") ?? "";
  const expected = "sha256=" +
    createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return given.length === expected.length &&
    timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

export interface ReceivedCall {
  headers: Headers;
  body: string;
  signatureValid: boolean;
}

/** A webhook receiver answering each request with the next status of the script (the last repeats). */
export function webhookReceiver(
  statuses: number[],
  { secret = "", hang }: { secret?: string; hang?: Promise<void> } = {},
) {
  const received: ReceivedCall[] = [];
  const arrivals: (() => void)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    received.push({
      headers: req.headers,
      body,
      signatureValid: verifySignature(secret, req.headers, body),
    });
    arrivals.splice(0).forEach((notify) => notify());
    if (hang) await hang;
    const status = statuses[Math.min(received.length - 1, statuses.length - 1)];
    const headers = status >= 300 && status < 400 ? { location: "http://127.0.0.1:9/" } : undefined;
    return new Response(status === 204 ? null : "answer", { status, headers });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook?token=tok-secret`,
    received,
    /** Resolves once `count` calls have arrived. */
    arrived(count: number): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve) => {
        const check = () => received.length >= count ? resolve() : arrivals.push(check);
        arrivals.push(check);
      });
    },
    close: () => server.shutdown(),
  };
}

export interface ArrivedMail {
  from: string;
  to: string[];
  secure: boolean;
  user: unknown;
  message: string;
}

/** A real SMTP server: STARTTLS offered with the test certificate (or TLS only), login required. */
export async function smtpServer(options: { secureOnly?: boolean } = {}) {
  const arrived: ArrivedMail[] = [];
  const server = new SMTPServer({
    key: TEST_TLS_KEY,
    cert: TEST_TLS_CERT,
    secure: options.secureOnly ?? false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) {
        callback(null, { user: SMTP_USER });
      } else callback(new Error("Invalid username or password"));
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
    /** An SMTP URL for this server with the given password (the right one by default). */
    url: (scheme = "smtp", password = SMTP_PASSWORD) =>
      `${scheme}://${encodeURIComponent(SMTP_USER)}:${
        encodeURIComponent(password)
      }@127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A loopback port nothing listens on. */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
