import { z } from "zod";
import { nameInPath, PROJECT_NAME_PATTERN } from "./project.ts";
import { MAX_URL_LENGTH } from "./probe.ts";

/** How the CLI and seed files take one setting of a kind. */
export interface TargetSettingRule {
  /** Needed on create (no default, nothing generated). */
  required: boolean;
  /** A credential: never on a command line nor in a seed file, never shown again. */
  secret: boolean;
  /** Mail addresses, comma-separated on a command line. */
  list?: boolean;
}

const REQUIRED = { required: true, secret: false } as const;
const OPTIONAL = { required: false, secret: false } as const;
const SECRET = { required: true, secret: true } as const;
const OPTIONAL_SECRET = { required: false, secret: true } as const;

/**
 * Each kind of stored target and its settings, for the CLI, which cannot read the service's
 * registry (`server/alerting/notify/providers/mod.ts`, the truth): a test keeps the two equal, kinds and
 * settings in the registry's order. `log` is built in and always there.
 */
export const TARGET_KIND_SETTINGS = {
  webhook: { url: REQUIRED, secret: OPTIONAL_SECRET },
  slack: { url: SECRET },
  discord: { url: SECRET },
  mail: { recipients: { ...REQUIRED, list: true } },
  pagerduty: { routing_key: SECRET, url: OPTIONAL },
  opsgenie: { api_key: SECRET, url: OPTIONAL },
  teams: { url: SECRET },
  google_chat: { url: SECRET },
  mattermost: { url: SECRET },
  matrix: { url: REQUIRED, access_token: SECRET, room_id: REQUIRED },
  telegram: { bot_token: SECRET, chat_id: REQUIRED, url: OPTIONAL },
  ntfy: { url: SECRET, token: OPTIONAL_SECRET },
  pushover: { token: SECRET, user: REQUIRED, url: OPTIONAL },
  gotify: { url: REQUIRED, token: SECRET },
  twilio_sms: {
    account_sid: REQUIRED,
    auth_token: SECRET,
    from: REQUIRED,
    to: REQUIRED,
    url: OPTIONAL,
  },
} as const satisfies Record<string, Record<string, TargetSettingRule>>;
export type TargetKind = keyof typeof TARGET_KIND_SETTINGS;
export const TARGET_KINDS = Object.keys(TARGET_KIND_SETTINGS) as [TargetKind, ...TargetKind[]];

/** A kind's settings by name; undefined for a kind there is none of. */
export function targetSettingsOf(kind: string): Record<string, TargetSettingRule> | undefined {
  return Object.hasOwn(TARGET_KIND_SETTINGS, kind)
    ? TARGET_KIND_SETTINGS[kind as TargetKind]
    : undefined;
}

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
 * kind's own fields, is built from the server's providers: `server/alerting/notify/providers/schema.ts`).
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
