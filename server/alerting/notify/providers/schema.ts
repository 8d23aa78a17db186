/**
 * The API's documents of notification targets, built from the registry: a create body and a patch
 * body holding every kind's fields (one body, so the REST document describes one; each problem
 * names its field), the target as read, and the list of kinds with their fields (what the
 * dashboard builds its form from). A new kind's fields come from its provider file.
 *
 * @module
 */
import { LOG_TARGET, MAX_URL_LENGTH, targetName, targetNameInPath } from "@probe/shared";
import { z } from "zod";
import type { Provider } from "../provider.ts";
import { type AllFields, providerOf, PROVIDERS } from "./mod.ts";

type Issue = { path: string; message: string };

/** Every kind's name, in the registry's order. */
export const TARGET_KIND_NAMES = PROVIDERS.map((p) => p.kind) as [string, ...string[]];

/**
 * Each field name of every kind, in the order first declared, with the first declaring kind's
 * rules: a field name means one thing across kinds. A kind whose rules for it differ has its own
 * checked too (`fieldProblems`).
 */
const FIELD_SCHEMAS = new Map<string, z.ZodType>();
for (const provider of PROVIDERS) {
  for (const [name, field] of Object.entries(provider.fields)) {
    if (!FIELD_SCHEMAS.has(name)) FIELD_SCHEMAS.set(name, field.schema);
  }
}
/** Every kind's fields, each optional (by its kind's rules, checked in `fieldProblems`). */
type OptionalFields = { [K in keyof AllFields]: z.ZodOptional<AllFields[K]["schema"]> };
const optionalFields = () =>
  Object.fromEntries(
    [...FIELD_SCHEMAS].map(([name, schema]) => [name, schema.optional()]),
  ) as OptionalFields;

/**
 * What is wrong with the fields given for a kind: a field it does not have, a value its own rules
 * refuse, its checks across fields; on create (`create`), a required field missing.
 */
export function fieldProblems(
  provider: Provider,
  given: Record<string, unknown>,
  create: boolean,
): Issue[] {
  const problems: Issue[] = [];
  for (const [name, schema] of FIELD_SCHEMAS) {
    const own = provider.fields[name];
    const value = given[name];
    if (value === undefined) {
      if (create && own?.required && own.default === undefined) {
        problems.push({ path: name, message: `is required for a ${provider.kind} target` });
      }
    } else if (!own) {
      problems.push({ path: name, message: `is not a field of a ${provider.kind} target` });
    } else if (own.schema !== schema) {
      const parsed = own.schema.safeParse(value);
      for (const issue of parsed.success ? [] : parsed.error.issues) {
        problems.push({ path: [name, ...issue.path].join("."), message: issue.message });
      }
    }
  }
  if (problems.length === 0 && provider.check) problems.push(...provider.check(given));
  return problems;
}

/** The fields of a body that are settings (not the name, nor the kind). */
export function settingsGiven(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    [...FIELD_SCHEMAS.keys()].filter((name) => input[name] !== undefined)
      .map((name) => [name, input[name]]),
  );
}

/**
 * Creating a target: its name, its kind and what that kind has (`GET /notification-target-kinds`
 * lists each kind's fields). A field another kind has is refused by name.
 */
export const targetCreateInput = z.strictObject({
  name: targetName,
  kind: z.enum(TARGET_KIND_NAMES),
  ...optionalFields(),
}).superRefine((input, ctx) => {
  const provider = providerOf(input.kind);
  if (!provider) return;
  for (const { path, message } of fieldProblems(provider, settingsGiven(input), true)) {
    ctx.addIssue({ code: "custom", path: path.split("."), input: "", message });
  }
});
export type TargetCreateInput = z.infer<typeof targetCreateInput>;

/** Changing a target: what its kind has (checked against its kind), never the kind itself. */
export const targetPatchInput = z.strictObject({
  name: targetNameInPath,
  kind: z.never({ error: "cannot be changed: delete the target and create it again" })
    .optional(),
  ...optionalFields(),
});
export type TargetPatchInput = z.infer<typeof targetPatchInput>;

/**
 * A field as read: `url` and `secret` are on every target (null when its kind has none); any other
 * only on its kind's. A secret reads as its mask.
 */
type ReadFields = {
  [K in Exclude<keyof AllFields, "url" | "secret">]: z.ZodOptional<
    AllFields[K] extends { secret: object } ? z.ZodString : AllFields[K]["schema"]
  >;
};
const readFields = () => {
  const fields: Record<string, z.ZodType> = {};
  for (const provider of PROVIDERS) {
    for (const [name, field] of Object.entries(provider.fields)) {
      if (name === "url" || name === "secret" || name in fields) continue;
      fields[name] = (field.secret ? z.string() : field.schema).optional();
    }
  }
  return fields as ReadFields;
};

/**
 * A target as it is read. `url` is a webhook's URL in full, a credential URL's scheme and host
 * only (`https://hooks.slack.com/…`), null for kinds without one and for `log`. `secret` is
 * masked (`whsec_…`) or null; only the create answer of a webhook without a secret of its own
 * carries the generated one in full.
 */
export const notificationTargetRead = z.object({
  name: z.string(),
  kind: z.enum([LOG_TARGET, ...TARGET_KIND_NAMES]),
  url: z.string().max(MAX_URL_LENGTH).nullable(),
  ...readFields(),
  secret: z.string().nullable(),
  created_at: z.iso.datetime().nullable(),
  updated_at: z.iso.datetime().nullable(),
});
/** A target as read; a kind's own fields by name too. */
export type NotificationTargetRead =
  & z.infer<typeof notificationTargetRead>
  & Record<string, unknown>;

/** A kind of target as the dashboard's form asks for it. */
export const targetKind = z.object({
  kind: z.string(),
  label: z.string(),
  /** What it sends, in a line; null when its provider says nothing more than its label. */
  description: z.string().nullable(),
  fields: z.array(z.object({
    name: z.string(),
    label: z.string(),
    /** How to ask: a URL, a line of text, a secret (never shown again), mail addresses. */
    input: z.enum(["url", "text", "secret", "emails"]),
    required: z.boolean(),
    /** Never answered once written: reads show a mask. */
    secret: z.boolean(),
    /** Made by the service when not given on create; that answer shows it, once. */
    generated: z.boolean(),
    help: z.string().nullable(),
    /** Taken when not given. */
    default: z.string().nullable(),
  })),
});
export type TargetKindInfo = z.infer<typeof targetKind>;

/** Every kind and its fields, in the registry's order. */
export function targetKinds(): TargetKindInfo[] {
  return PROVIDERS.map((p) => ({
    kind: p.kind,
    label: p.label,
    description: p.description ?? null,
    fields: Object.entries(p.fields).map(([name, f]) => ({
      name,
      label: f.form.label,
      input: f.form.input,
      required: Boolean(f.required && f.default === undefined),
      secret: Boolean(f.secret),
      generated: Boolean(f.generate),
      help: f.form.help ?? null,
      default: f.default ?? null,
    })),
  }));
}
