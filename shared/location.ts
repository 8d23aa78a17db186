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
  /** Its runners seen in the last minute. */
  runners: z.int(),
  /** When one of its runners was last seen; null if never. */
  last_seen_at: z.string().nullable(),
  /** The version of the runner seen last; null if none was. */
  version: z.string().nullable(),
  /** Runs it recorded in the last minute. */
  checks_per_minute: z.int(),
  /** How far behind its schedule is (s): the oldest due run no runner has claimed; 0 if none. */
  lag_seconds: z.number(),
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
