/**
 * Settings several kinds share, so that a field name means one thing across kinds (`url` is always
 * an http(s) URL) and the API describes one body.
 *
 * @module
 */
import { httpUrl, targetRecipients } from "@probe/shared";
import type { SettingField } from "../provider.ts";

/** A URL as shown when it is a credential: its scheme and host, the rest elided. */
export function maskCredentialUrl(url: string): string {
  const { protocol, host } = new URL(url);
  return `${protocol}//${host}/…`;
}

/** A URL shown in full on reads. */
export const shownUrl = (label: string, help?: string) =>
  ({
    schema: httpUrl,
    required: true as const,
    form: { label, input: "url" as const, ...(help && { help }) },
  }) satisfies SettingField;

/** A URL that is the credential (whoever has it can post): shown as scheme and host only. */
export const secretUrl = (label: string, help?: string) =>
  ({
    schema: httpUrl,
    required: true as const,
    secret: { mask: maskCredentialUrl },
    form: { label, input: "url" as const, ...(help && { help }) },
  }) satisfies SettingField;

/** Mail addresses: 1 to 20, none repeated. */
export const recipients = {
  schema: targetRecipients,
  required: true as const,
  form: {
    label: "Recipients",
    input: "emails" as const,
    help: "One mail address per line, 1 to 20.",
  },
} satisfies SettingField;
