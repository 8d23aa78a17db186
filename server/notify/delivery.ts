/** How one attempt to send a notification over one channel ended: a value, never an exception. */
export interface DeliveryResult {
  outcome: "delivered" | "failed" | "not_configured";
  /** Requests or connections made; 0 when nothing was sent. */
  attempts: number;
  /** Why it failed, in words safe to store and show: no URL, credential or secret in it. */
  error?: string;
}

/** Removes every URL (which may carry tokens or credentials) from an error message. */
export function redactUrls(message: string): string {
  return message.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s)"']*/gi, "<url>");
}

/** Removes the given secrets, plain and URL-encoded, from a message. */
export function redactSecrets(message: string, secrets: (string | undefined)[]): string {
  let out = message;
  for (const secret of secrets) {
    if (!secret) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) {
      out = out.replaceAll(form, "<redacted>");
    }
  }
  return out;
}
