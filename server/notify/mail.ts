import type { ConnectionOptions } from "node:tls";
import nodemailer from "nodemailer";
import { type DeliveryResult, redactSecrets, redactUrls } from "./delivery.ts";

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
  const timeout = settings.timeoutMs ?? 10_000;
  let transport;
  try {
    transport = nodemailer.createTransport(
      {
        url: settings.smtpUrl,
        connectionTimeout: timeout,
        greetingTimeout: timeout,
        socketTimeout: timeout * 3,
        ...(settings.tls && { tls: settings.tls }),
      } as Parameters<typeof nodemailer.createTransport>[0],
    );
  } catch (error) {
    return { outcome: "failed", attempts: 0, error: describe(error, settings.smtpUrl) };
  }
  try {
    await transport.sendMail({
      from: settings.from,
      to: settings.to,
      subject: message.subject,
      text: message.text,
    });
    return { outcome: "delivered", attempts: 1 };
  } catch (error) {
    return { outcome: "failed", attempts: 1, error: describe(error, settings.smtpUrl) };
  } finally {
    transport.close();
  }
}

/** The error in words that hold neither the SMTP URL nor its credentials. */
function describe(error: unknown, smtpUrl: string): string {
  const e = error as { message?: unknown; code?: unknown };
  const message = typeof e?.message === "string" ? e.message : String(error);
  const code = typeof e?.code === "string" ? `${e.code}: ` : "";
  let user: string | undefined, password: string | undefined;
  try {
    const url = new URL(smtpUrl);
    user = decodeURIComponent(url.username) || undefined;
    password = decodeURIComponent(url.password) || undefined;
  } catch { /* validated at start-up */ }
  return redactSecrets(redactUrls(`${code}${message}`), [password, user]);
}
