import { z } from "zod";
import { nameInPath, PROJECT_NAME_PATTERN } from "./project.ts";
import { MAX_URL_LENGTH } from "./probe.ts";

/**
 * The kinds of stored notification targets the CLI's seed files know (the service's are its
 * providers, `server/notify/providers/`); `log` is built in and always there.
 */
export const TARGET_KINDS = ["webhook", "slack", "discord", "mail"] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/** The built-in target: one JSON log line per notification. */
export const LOG_TARGET = "log";

/** Names no stored target may take: they are the I'm alive channels (`log` is built in). */
export const RESERVED_TARGET_NAMES = ["log", "mail", "webhook"] as const;

export const MAX_TARGET_RECIPIENTS = 20;
/** A webhook signing key holds this many bytes at least and at most (Standard Webhooks). */
export const WEBHOOK_SECRET_BYTES = { min: 24, max: 64 } as const;
export const WEBHOOK_SECRET_PREFIX = "whsec_";
/** How a stored secret is shown: its kind, never its value. */
export const MASKED_WEBHOOK_SECRET = `${WEBHOOK_SECRET_PREFIX}…`;

/** Target names: as project names (1 to 64 characters), and not one of the reserved names. */
export const targetName = z.string().min(1).max(64).regex(
  PROJECT_NAME_PATTERN,
  "must start with a letter or digit and hold only letters, digits, '.', '_' and '-'",
).refine(
  (name) => !(RESERVED_TARGET_NAMES as readonly string[]).includes(name.toLowerCase()),
  `"log", "mail" and "webhook" are reserved`,
);

/**
 * `{name}` in a path: the document carries the name rules (the built-in `log` keeps them too); a
 * name that breaks them names no target, so it is answered 404 like any missing one.
 */
export const targetNameInPath = nameInPath;

/** Base64 (standard alphabet, padded) of 24 to 64 bytes after `whsec_`. */
function webhookSecretProblem(value: string): string | null {
  const message = `must be "${WEBHOOK_SECRET_PREFIX}" followed by the base64 of ` +
    `${WEBHOOK_SECRET_BYTES.min} to ${WEBHOOK_SECRET_BYTES.max} bytes`;
  if (!value.startsWith(WEBHOOK_SECRET_PREFIX)) return message;
  const encoded = value.slice(WEBHOOK_SECRET_PREFIX.length);
  if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return message;
  let bytes: number;
  try {
    bytes = atob(encoded).length;
  } catch {
    return message;
  }
  return bytes < WEBHOOK_SECRET_BYTES.min || bytes > WEBHOOK_SECRET_BYTES.max ? message : null;
}

/**
 * A Standard Webhooks signing key, `whsec_` and the base64 of 24 to 64 random bytes. The
 * message of a bad one never repeats the value.
 */
export const webhookSecret = z.string().max(200).superRefine((value, ctx) => {
  const problem = webhookSecretProblem(value);
  if (problem) ctx.addIssue({ code: "custom", input: "", message: problem });
});

export const WEBHOOK_URL_CREDENTIALS_MESSAGE =
  "must not hold a user name or password (the signature authenticates the service)";

/** Whether a URL names a user or password (`https://user:pass@host/`). */
export function hasUrlCredentials(url: string): boolean {
  const parsed = new URL(url);
  return parsed.username !== "" || parsed.password !== "";
}

export const targetRecipients = z.array(z.email().max(254))
  .min(1)
  .max(MAX_TARGET_RECIPIENTS)
  .refine((to) => new Set(to.map((a) => a.toLowerCase())).size === to.length, {
    message: "must not repeat an address",
  });

export const targetRef = z.object({ name: targetNameInPath });

/**
 * What every target has as it is read, whatever its kind (the API's full document, with each
 * kind's own fields, is built from the server's providers: `server/notify/providers/schema.ts`).
 * `url` and `secret` are masked where they are credentials, null where the kind has none.
 */
export const notificationTarget = z.object({
  name: z.string(),
  kind: z.string(),
  url: z.string().max(MAX_URL_LENGTH).nullable(),
  recipients: z.array(z.string()).optional(),
  secret: z.string().nullable(),
  created_at: z.iso.datetime().nullable(),
  updated_at: z.iso.datetime().nullable(),
});
export type NotificationTarget = z.infer<typeof notificationTarget>;

/** What one test delivery came to. */
export const targetTestResult = z.object({
  target: z.string(),
  outcome: z.enum(["delivered", "failed", "not_configured"]),
  attempts: z.int().min(0),
  /** A summary such as `HTTP 503`, `timeout` or `blocked: 127.0.0.1 is loopback`. */
  error: z.string().optional(),
});
export type TargetTestResult = z.infer<typeof targetTestResult>;
