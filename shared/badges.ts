import { z } from "zod";
import { nameInPath } from "./project.ts";

/** The most badge tokens one project holds: delete unused ones to make more. */
export const MAX_BADGES_PER_PROJECT = 100;

/** The windows an uptime or latency badge may cover (`?window=`; 24h by default). */
export const BADGE_WINDOWS = ["24h", "7d", "30d"] as const;
export const badgeWindow = z.enum(BADGE_WINDOWS);
export type BadgeWindow = z.infer<typeof badgeWindow>;

/** What a badge shows: a probe's (or a project's worst) state, its uptime, its p95 latency. */
export const BADGE_KINDS = ["status", "uptime", "latency"] as const;
export const badgeKind = z.enum(BADGE_KINDS);
export type BadgeKind = z.infer<typeof badgeKind>;

export const badgeScope = z.enum(["project", "probe"]);

/** Where a token's badges are served, relative to the service's origin. */
export const badgeUrls = z.object({
  status_svg: z.string(),
  uptime_svg: z.string(),
  latency_svg: z.string(),
  /** Shields' endpoint badge JSON (`https://img.shields.io/endpoint?url=…`). */
  json: z.string(),
});

/**
 * A badge token as listed, with the token and its badges' paths: a token reveals only what its
 * badge shows, so it is kept and answered on every read, for its snippet to be copied again.
 */
export const badge = z.object({
  id: z.string(),
  project: z.string(),
  /** `probe`: the badges of one probe; `project`: of all the project's probes together. */
  scope: badgeScope,
  /** The probe of a `probe` badge; null for a `project` badge. */
  probe_id: z.string().nullable(),
  created_at: z.string(),
  /** When the token was last replaced; null if never. */
  rotated_at: z.string().nullable(),
  /**
   * 32 random bytes, base64url; null for a token made before tokens were kept (only its digest
   * was stored): rotate the badge once to have one.
   */
  token: z.string().nullable(),
  /** Where the token's badges are served; null when `token` is. */
  urls: badgeUrls.nullable(),
});
export type Badge = z.infer<typeof badge>;

/** A new (or rotated) token, as made: never null. */
export const badgeWithToken = badge.extend({
  /** 32 random bytes, base64url. */
  token: z.string(),
  urls: badgeUrls,
});
export type BadgeWithToken = z.infer<typeof badgeWithToken>;

/** The paths of a token's badges. */
export function badgeUrlsOf(token: string): z.infer<typeof badgeUrls> {
  return {
    status_svg: `/badge/${token}/status.svg`,
    uptime_svg: `/badge/${token}/uptime.svg?window=24h`,
    latency_svg: `/badge/${token}/latency.svg?window=24h`,
    json: `/badge/${token}.json`,
  };
}

export const badgeListInput = z.object({ project: nameInPath });

/** `POST /projects/{project}/badges`: with `probe_id`, a probe's badge; without, the project's. */
export const badgeCreateInput = z.strictObject({
  project: nameInPath,
  probe_id: z.string().optional().describe(
    "The probe whose badges the token serves; leave it out for the whole project's.",
  ),
});
export type BadgeCreateInput = z.infer<typeof badgeCreateInput>;

export const badgeRef = z.object({ project: nameInPath, id: z.string() });
export type BadgeRef = z.infer<typeof badgeRef>;

/** Shields' endpoint badge schema (`/badge/{token}.json`). */
export const shieldsEndpoint = z.object({
  schemaVersion: z.literal(1),
  label: z.string(),
  message: z.string(),
  color: z.string(),
});
export type ShieldsEndpoint = z.infer<typeof shieldsEndpoint>;

/** Rotating takes no input: no body or `{}`. */
export const badgeRotateInput = z.strictObject({ project: nameInPath, id: z.string() });
