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
  /** When the call arrived (ms since the epoch). */
  at: number;
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
    const at = Date.now();
    const body = await req.text();
    received.push({
      at,
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

/** The phases at which a hostile SMTP server fails, its reply echoing the credentials. */
export type HostilePhase = "auth" | "mail" | "rcpt" | "data";

/**
 * Every form in which credentials could leak from an SMTP exchange: as given, URL-encoded, and
 * the base64 the client sent them in (AUTH PLAIN's `\0user\0password`, AUTH LOGIN's each).
 */
export function credentialForms(user: string, password: string): string[] {
  const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
  const forms = [
    user,
    password,
    encodeURIComponent(user),
    encodeURIComponent(password),
    b64(`\0${user}\0${password}`),
    b64(user),
    b64(password),
  ];
  // A base64 text stripped of its padding still gives the secret away.
  return [...new Set(forms.flatMap((f) => [f, f.replace(/=+$/, "")]))];
}

/**
 * A real SMTP server: STARTTLS offered with the test certificate (or TLS only), login required.
 * With `hostile`, it accepts any login but fails the given phase with a reply that echoes the
 * credentials it was sent, in every form (`echoed` keeps each such reply).
 */
export async function smtpServer(
  options: { secureOnly?: boolean; hostile?: HostilePhase } = {},
) {
  const arrived: ArrivedMail[] = [];
  const echoed: string[] = [];
  const { hostile } = options;
  type Session = { user?: unknown };
  // The reply a hostile server fails with: the credentials of the session, as sent and decoded.
  const refuse = (session: Session, code: number) => {
    const { name = "", password = "" } = (session.user ?? {}) as {
      name?: string;
      password?: string;
    };
    const message = `Denied ${credentialForms(name, password).join(" ")}`;
    echoed.push(message);
    return Object.assign(new Error(message), { responseCode: code });
  };
  const server = new SMTPServer({
    key: TEST_TLS_KEY,
    cert: TEST_TLS_CERT,
    secure: options.secureOnly ?? false,
    logger: false,
    onAuth(auth, _session, callback) {
      const credentials = { name: auth.username, password: auth.password };
      if (hostile === "auth") callback(refuse({ user: credentials }, 535));
      else if (hostile) callback(null, { user: credentials });
      else if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) {
        callback(null, { user: SMTP_USER });
      } else callback(new Error("Invalid username or password"));
    },
    onMailFrom(_address, session, callback) {
      callback(hostile === "mail" ? refuse(session, 451) : undefined);
    },
    onRcptTo(_address, session, callback) {
      callback(hostile === "rcpt" ? refuse(session, 550) : undefined);
    },
    onData(stream, session, callback) {
      if (hostile === "data") {
        stream.resume();
        stream.on("end", () => callback(refuse(session, 554)));
        return;
      }
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
    /** The replies a hostile server failed with, credentials echoed in them. */
    echoed,
    /** An SMTP URL for this server with the given password (the right one by default). */
    url: (scheme = "smtp", password = SMTP_PASSWORD, user = SMTP_USER) =>
      `${scheme}://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
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
