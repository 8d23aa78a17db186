/**
 * Settings the on-call and chat kinds share: a vendor's base URL with its public default (so
 * tests, self-hosted servers and other regions override it), and credentials (tokens, keys)
 * masked on reads to their last four characters.
 *
 * @module
 */
import { httpUrl } from "@probe/shared";
import { z } from "zod";
import type { SettingField } from "../provider.ts";

/** A base URL with the vendor's public one as default; shown in full on reads. */
export const baseUrl = (label: string, vendorDefault: string, help?: string) =>
  ({
    schema: httpUrl,
    default: vendorDefault,
    form: { label, input: "url" as const, help: help ?? `Default ${vendorDefault}` },
  }) satisfies SettingField;

/** A URL to send to, shown in full (it is not the credential): required, no default. */
export const serverUrl = (label: string, help: string) =>
  ({
    schema: httpUrl,
    required: true as const,
    form: { label, input: "url" as const, help },
  }) satisfies SettingField;

/** A credential as read: `…` and its last four characters when it is long enough to spare them. */
export function maskToken(value: string): string {
  return value.length >= 20 ? `…${value.slice(-4)}` : "…";
}

/**
 * A credential sent in a header, a path or a form: printable ASCII without spaces, so it can
 * neither break a request nor be read differently by the vendor.
 */
export const tokenText = z.string().regex(
  /^[\x21-\x7e]{1,256}$/,
  "must be 1 to 256 printable ASCII characters without spaces",
);

/** A secret setting (a token, a key). */
export const secretToken = (label: string, help: string, schema: z.ZodType<string> = tokenText) =>
  ({
    schema,
    required: true as const,
    secret: { mask: maskToken },
    form: { label, input: "secret" as const, help },
  }) satisfies SettingField;

/** A readable line of text (a chat's id, a phone number). */
export const textSetting = (label: string, help: string, schema: z.ZodType<string>) =>
  ({
    schema,
    required: true as const,
    form: { label, input: "text" as const, help },
  }) satisfies SettingField;

/** A base URL joined with a path: `https://api.example.com/` and `/v2/x` make one slash. */
export function endpoint(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}
