import type { ConnectionOptions } from "node:tls";
import type nodemailer from "nodemailer";
import { codeOf, type DeliveryResult, SOCKET_FAILURES, tlsSummary } from "./delivery.ts";

export interface MailSettings {
  /** `smtp://` (STARTTLS when the server offers it) or `smtps://` (TLS from the start). */
  smtpUrl: string;
  from: string;
  to: string[];
  /** TLS options for the connection, such as a private CA; tests trust their own certificate. */
  tls?: ConnectionOptions;
  /** Bounds each phase of the SMTP exchange; 10 s by default. */
  timeoutMs?: number;
}

export interface MailMessage {
  subject: string;
  text: string;
}

/** Sends one plain-text mail through SMTP; the outcome is a value, never an exception. */
export async function sendMail(
  settings: MailSettings,
  message: MailMessage,
): Promise<DeliveryResult> {
  return (await smtpExchange(settings, message)).result;
}

/**
 * One SMTP exchange: its outcome, and whether the server refused the mail for good (a 5xx reply
 * to the sender, the recipients or the message, which sending again would only repeat).
 */
export async function smtpExchange(
  settings: MailSettings,
  message: MailMessage,
): Promise<{ result: DeliveryResult; permanent: boolean }> {
  const done = (result: DeliveryResult, permanent = false) => ({ result, permanent });
  const timeout = settings.timeoutMs ?? 10_000;
  // Loaded at the first mail, not at start: most services never send one.
  const { default: mailer } = await import("nodemailer");
  let transport;
  try {
    transport = mailer.createTransport(
      {
        url: settings.smtpUrl,
        connectionTimeout: timeout,
        greetingTimeout: timeout,
        socketTimeout: timeout * 3,
        ...(settings.tls && { tls: settings.tls }),
      } as Parameters<typeof nodemailer.createTransport>[0],
    );
  } catch {
    return done({ outcome: "failed", attempts: 0, error: "smtp: invalid configuration" });
  }
  try {
    await transport.sendMail({
      from: settings.from,
      to: settings.to,
      subject: message.subject,
      text: message.text,
    });
    return done({ outcome: "delivered", attempts: 1 });
  } catch (error) {
    const { code, responseCode } = (typeof error === "object" && error !== null ? error : {}) as {
      code?: unknown;
      responseCode?: unknown;
    };
    const refused = (code === "EENVELOPE" || code === "EMESSAGE") &&
      typeof responseCode === "number" && responseCode >= 500 && responseCode <= 599;
    return done({ outcome: "failed", attempts: 1, error: summarizeMailError(error) }, refused);
  } finally {
    transport.close();
  }
}

/**
 * A failed SMTP exchange in fixed words, built from nodemailer's error code, the underlying
 * socket or TLS code and the SMTP reply code: `smtp: authentication failed (535)`,
 * `smtp: connection refused`, `tls: certificate not trusted`. Never the error's message nor the
 * server's reply text, which a hostile server fills as it likes (an AUTH failure echoing the
 * base64 of the user and password, say).
 */
export function summarizeMailError(error: unknown): string {
  const e = (typeof error === "object" && error !== null ? error : {}) as {
    code?: unknown;
    originalCode?: unknown;
    responseCode?: unknown;
    command?: unknown;
  };
  const code = codeOf(e.code);
  // The socket's own code, kept by nodemailer when it files the error under ESOCKET or EDNS.
  const cause = codeOf(e.originalCode);
  const replyCode = e.responseCode;
  const reply = typeof replyCode === "number" && Number.isInteger(replyCode) &&
      replyCode >= 100 && replyCode <= 599
    ? ` (${replyCode})`
    : "";
  const fromSocket = (c: string | null) => {
    if (!c) return null;
    const tls = tlsSummary(c);
    if (tls) return tls;
    return SOCKET_FAILURES[c] ? `smtp: ${SOCKET_FAILURES[c]}` : null;
  };
  const socket = fromSocket(cause);
  if (socket) return socket;
  switch (code) {
    case "EAUTH":
      return `smtp: authentication failed${reply}`;
    case "ENOAUTH":
      return "smtp: credentials missing";
    case "EENVELOPE": {
      const what = e.command === "MAIL FROM"
        ? "sender"
        : e.command === "RCPT TO"
        ? "recipients"
        : "envelope";
      return `smtp: ${what} refused${reply}`;
    }
    case "EMESSAGE":
      return `smtp: message refused${reply}`;
    case "EPROTOCOL":
      return `smtp: unexpected reply${reply}`;
    case "ETLS":
      return `tls: STARTTLS failed${reply}`;
    case "ECONNECTION":
      return "smtp: connection closed unexpectedly";
    case "EDNS":
      return "smtp: host not found";
    case "ESOCKET":
      return cause ? `smtp: network error (${cause})` : "smtp: network error";
  }
  return fromSocket(code) ?? (code ? `smtp: failed (${code})` : "smtp: failed");
}
