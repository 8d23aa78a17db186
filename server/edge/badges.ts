/**
 * Badges, served without a key to whoever holds a badge token: `/badge/{token}/status.svg`,
 * `/badge/{token}/uptime.svg?window=`, `/badge/{token}/latency.svg?window=` (SVG drawn by
 * badge-maker, the library of Shields itself) and `/badge/{token}.json`, Shields' endpoint badge
 * JSON. A token that is not current is declined here and answered 404 by the handler.
 *
 * What a token resolves to, and each figure, are kept in process for a few seconds
 * (`PUBLIC_CACHE_MS`); a token rotated or deleted through this process stops at once.
 *
 * @module
 */
import {
  BADGE_KINDS,
  BADGE_WINDOWS,
  type BadgeKind,
  type BadgeWindow,
  type ShieldsEndpoint,
} from "@probe/shared";
import type { Db } from "../storage/database.ts";
import type { ProbeState } from "../storage/schema.ts";
import {
  badgeLatency,
  type BadgeScope,
  badgeState,
  badgeTokensVersion,
  badgeUptime,
  resolveBadgeToken,
} from "../domain/badges.ts";
import { validationFailed } from "../procedures/errors.ts";
import type { PublicPage } from "./edge_types.ts";
import { percent, PUBLIC_CACHE_MS, publicAnswer, publicFailure } from "./public_pages.ts";
import { TtlCache } from "../base/ttl_cache.ts";
import { isRead } from "./methods.ts";

export const BADGE_PREFIX = "/badge/";
const SVG_PATH = /^([A-Za-z0-9_-]+)\/(status|uptime|latency)\.svg$/;
const JSON_PATH = /^([A-Za-z0-9_-]+)\.json$/;

/** What a badge says: Shields' three fields. */
export type BadgeFace = Omit<ShieldsEndpoint, "schemaVersion">;

const STATE_COLORS: Record<ProbeState, string> = {
  up: "brightgreen",
  degraded: "yellow",
  down: "red",
  unknown: "lightgrey",
};

export function statusFace(state: ProbeState): BadgeFace {
  return { label: "status", message: state, color: STATE_COLORS[state] };
}

/** Uptime's colour steps, Shields' own scale from brightgreen to red. */
export function uptimeFace(uptime: number | null, window: BadgeWindow): BadgeFace {
  const label = `uptime ${window}`;
  if (uptime === null) return { label, message: "no data", color: "lightgrey" };
  const color = uptime >= 0.999
    ? "brightgreen"
    : uptime >= 0.99
    ? "green"
    : uptime >= 0.97
    ? "yellowgreen"
    : uptime >= 0.95
    ? "yellow"
    : uptime >= 0.9
    ? "orange"
    : "red";
  return { label, message: percent(uptime), color };
}

/**
 * The p95 of runs' durations: a probe's latency, or (`measure` "run time") a heartbeat's run
 * time, from its `/start` to its success (0 without a start), since a heartbeat has no latency.
 */
export function latencyFace(
  p95: number | null,
  window: BadgeWindow,
  measure: "latency" | "run time" = "latency",
): BadgeFace {
  const label = `${measure} p95 ${window}`;
  if (p95 === null) return { label, message: "no data", color: "lightgrey" };
  const message = p95 < 1000 ? `${p95} ms` : `${(p95 / 1000).toFixed(1)} s`;
  const color = p95 < 300
    ? "brightgreen"
    : p95 < 1000
    ? "green"
    : p95 < 2000
    ? "yellow"
    : p95 < 5000
    ? "orange"
    : "red";
  return { label, message, color };
}

type Choice<T extends string> = { ok: true; value: T } | { ok: false; response: Response };

/** A query parameter among `allowed` (the first when absent); a 422 naming it otherwise. */
function choose<T extends string>(url: URL, name: string, allowed: readonly T[]): Choice<T> {
  const values = url.searchParams.getAll(name);
  if (values.length === 0) return { ok: true, value: allowed[0] };
  if (values.length === 1 && (allowed as readonly string[]).includes(values[0])) {
    return { ok: true, value: values[0] as T };
  }
  const { status, body } = validationFailed(name, `must be one of ${allowed.join(", ")}`);
  return {
    ok: false,
    response: new Response(JSON.stringify(body), {
      status,
      headers: {
        "content-type": "application/json",
        "x-content-type-options": "nosniff",
        "cache-control": "no-store",
      },
    }),
  };
}

/**
 * badge-maker, loaded at the first SVG badge rather than at start: its font-width tables cost
 * some 6 MiB of the server's memory, which a service whose badges nobody shows never needs.
 */
let badgeMakerLoaded: Promise<typeof import("badge-maker")> | undefined;
const badgeMaker = () => badgeMakerLoaded ??= import("badge-maker");

const SVG_HEADERS = {
  "content-type": "image/svg+xml; charset=utf-8",
  // The SVG holds no script and loads nothing; opened on its own, it may not either.
  "content-security-policy": "default-src 'none'",
};
const JSON_HEADERS = {
  "content-type": "application/json",
  "access-control-allow-origin": "*",
};

/** Serves `GET` (and `HEAD`) of badges for current tokens; null for everything else. */
export function createBadges(
  { db, now = Date.now, ttlMs = PUBLIC_CACHE_MS, defaultIntervalSeconds }: {
    db: Db;
    now?: () => number;
    ttlMs?: number;
    /** `PROBE_INTERVAL_SECONDS`: weighs the runs of probes without their own interval. */
    defaultIntervalSeconds?: number;
  },
): PublicPage {
  const tokens = new TtlCache<BadgeScope | null>({ ttlMs, now, maxEntries: 10_000 });
  const faces = new TtlCache<BadgeFace>({ ttlMs, now, maxEntries: 10_000 });

  function face(scope: BadgeScope, kind: BadgeKind, window: BadgeWindow): Promise<BadgeFace> {
    const of = scope.probeKey === null ? `project ${scope.project}` : `probe ${scope.probeKey}`;
    return faces.get(`${of} ${kind} ${window}`, 0, async () => {
      if (kind === "status") return statusFace(await badgeState({ db, scope }));
      if (kind === "uptime") {
        return uptimeFace(
          await badgeUptime({ db, scope, window, now: now(), defaultIntervalSeconds }),
          window,
        );
      }
      const p95 = await badgeLatency({ db, scope, window, now: now() });
      return latencyFace(p95, window, scope.heartbeat ? "run time" : "latency");
    });
  }

  return async (request, url) => {
    if (!isRead(request.method)) return null;
    if (!url.pathname.startsWith(BADGE_PREFIX)) return null;
    const rest = url.pathname.slice(BADGE_PREFIX.length);
    const svg = SVG_PATH.exec(rest);
    const json = svg ? null : JSON_PATH.exec(rest);
    if (!svg && !json) return null;
    const token = (svg ?? json)![1];
    try {
      const scope = await tokens.get(
        token,
        badgeTokensVersion(db),
        () => resolveBadgeToken({ db, token }),
      );
      if (!scope) return null;
      const kind = svg ? { ok: true as const, value: svg[2] as BadgeKind } : choose(
        url,
        "kind",
        BADGE_KINDS,
      );
      if (!kind.ok) return kind.response;
      // A status badge has no window: one sent is ignored.
      const window: Choice<BadgeWindow> = kind.value === "status"
        ? { ok: true, value: BADGE_WINDOWS[0] }
        : choose(url, "window", BADGE_WINDOWS);
      if (!window.ok) return window.response;
      const shown = await face(scope, kind.value, window.value);
      if (svg) return publicAnswer(request, (await badgeMaker()).makeBadge(shown), SVG_HEADERS);
      const endpoint: ShieldsEndpoint = { schemaVersion: 1, ...shown };
      return publicAnswer(request, JSON.stringify(endpoint), JSON_HEADERS);
    } catch (error) {
      return publicFailure(error);
    }
  };
}
