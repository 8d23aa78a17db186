import { z } from "zod";
import { apiKeyRole } from "./api_keys.ts";

/** A dashboard session as the sessions API shows it: never its token. */
export const session = z.object({
  id: z.string(),
  /** How it was started: with an API key (`key`) or single sign-on (`oidc`). */
  kind: z.enum(["key", "oidc"]),
  /** Who: `key NAME` for a key's session, the user's email (or subject) for single sign-on. */
  name: z.string(),
  role: apiKeyRole,
  projects: z.array(z.string()).nullable(),
  created_at: z.string(),
  /** Its last use, to the minute. */
  last_seen_at: z.string(),
  /** When it ends however it is used. */
  expires_at: z.string(),
  /** When it ends if not used again. */
  idle_expires_at: z.string(),
  user_agent: z.string().nullable(),
});
export type Session = z.infer<typeof session>;

export const sessionListInput = z.object({
  name: z.string().max(320).optional().describe("Only the sessions of this name."),
});
export type SessionListInput = z.infer<typeof sessionListInput>;

export const sessionRef = z.object({
  id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "must be a session id"),
});
export type SessionRef = z.infer<typeof sessionRef>;
