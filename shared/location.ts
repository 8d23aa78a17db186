import { z } from "zod";
import { locationName, nameInPath, text } from "./project.ts";

/** The name of the built-in location unless `RUNNER_LOCATION` says otherwise. */
export const DEFAULT_LOCAL_LOCATION = "local";

export const locationKind = z.enum(["local", "remote"]);

/** A location as read: never its token, which is answered once only. */
export const location = z.object({
  name: z.string(),
  label: z.string().nullable(),
  /** `local`: the runners on the database (built in); `remote`: runners over the API. */
  kind: locationKind,
  /** Null for the built-in location. */
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
  /** Probes that run there (their own `locations` or their project's default). */
  probes: z.int(),
});
export type Location = z.infer<typeof location>;

/** A new location, or a rotated token: the only answers that ever hold the token. */
export const locationWithToken = location.extend({
  /** `plt_` and 32 random bytes, base64url: keep it; it is not shown again. */
  token: z.string(),
});
export type LocationWithToken = z.infer<typeof locationWithToken>;

const labelField = text(200).min(1).nullable().optional();

export const locationCreateInput = z.strictObject({ name: locationName, label: labelField });
export type LocationCreateInput = z.infer<typeof locationCreateInput>;

export const locationRef = z.object({ location: nameInPath });
export type LocationRef = z.infer<typeof locationRef>;

export const locationPatchInput = z.strictObject({ location: nameInPath, label: labelField });
export type LocationPatchInput = z.infer<typeof locationPatchInput>;
