import { z } from "zod";
import { instant } from "./instant.ts";
import { locationName as resourceName, nameInPath, projectName } from "./project.ts";

/** What a key may do (docs/access.md): `viewer` reads, `editor` also changes, `admin` all. */
export const apiKeyRole = z.enum(["viewer", "editor", "admin"]);

const projectsField = z.array(projectName).min(1).max(100).nullable().describe(
  "The projects the key sees; null for every project.",
);

/** A key's record as read: never the key, which is answered once only. */
export const apiKey = z.object({
  name: z.string(),
  role: apiKeyRole,
  projects: z.array(z.string()).nullable(),
  /**
   * A key from the environment (`SERVICE_API_KEY`, `SERVICE_API_KEYS_READONLY`): shown, never
   * changed through the API.
   */
  configured: z.boolean(),
  created_at: z.string().nullable(),
  /** The name of the key (or user) that made it; null for a configured key. */
  created_by: z.string().nullable(),
  expires_at: z.string().nullable(),
  /** When it was last let in, to the minute; null if never (or a configured key). */
  last_used_at: z.string().nullable(),
});
export type ApiKey = z.infer<typeof apiKey>;

/** A new key, or a rotated one: the only answers that ever hold the key. */
export const apiKeyWithKey = apiKey.extend({
  /** `psk_` and 32 random bytes, base64url: keep it; it is not shown again. */
  key: z.string(),
});
export type ApiKeyWithKey = z.infer<typeof apiKeyWithKey>;

const expiresField = instant.nullable().describe(
  "When the key stops working (in the future); null or absent: never.",
);

export const apiKeyCreateInput = z.strictObject({
  name: resourceName,
  role: apiKeyRole,
  projects: projectsField.optional(),
  expires_at: expiresField.optional(),
});
export type ApiKeyCreateInput = z.infer<typeof apiKeyCreateInput>;

export const apiKeyRef = z.object({ name: nameInPath });
export type ApiKeyRef = z.infer<typeof apiKeyRef>;

export const apiKeyPatchInput = z.strictObject({
  name: nameInPath,
  role: apiKeyRole.optional(),
  projects: projectsField.optional(),
  expires_at: expiresField.optional(),
});
export type ApiKeyPatchInput = z.infer<typeof apiKeyPatchInput>;
