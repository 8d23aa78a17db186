/**
 * Public status pages, served without a key: `/status/{project}`, HTML rendered here that needs
 * no JavaScript, its JSON twin `/status/{project}/status.json`, and `/status/{project}/live.js`,
 * the one script the page loads (and its CSP allows) to put new figures in place. A
 * project whose page is not public is answered exactly as one that does not exist: this page
 * declines it, and the handler answers its one 404.
 *
 * Pages are kept in process for a few seconds ({@link PUBLIC_CACHE_MS}), so a flood of anonymous
 * requests reads the database once per page and period; a change of a page's settings made
 * through this process shows at once.
 *
 * @module
 */
import {
  PROJECT_NAME_PATTERN,
  type PublicStatusPage,
  STATUS_PAGE_DAYS,
  type StatusPageDay,
} from "@probe/shared";
import { createHash } from "node:crypto";
import type { Db } from "../storage/database.ts";
import type { ProbeState } from "../storage/schema.ts";
import { publicStatusPage, statusPagesVersion } from "../domain/status_pages.ts";
import type { PublicPage } from "./edge_types.ts";
import { percent, PUBLIC_CACHE_MS, publicAnswer, publicFailure } from "./public_pages.ts";
import { TtlCache } from "../base/ttl_cache.ts";
import { isRead } from "./methods.ts";
import { LIVE_SCRIPT } from "./status_page_live.ts";

export { PUBLIC_CACHE_MS };

export const STATUS_PREFIX = "/status/";
const JSON_SUFFIX = "/status.json";
const LIVE_SUFFIX = "/live.js";
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** `2026-11-20 14:03 UTC`. */
const utc = (at: string) => `${at.slice(0, 10)} ${at.slice(11, 16)} UTC`;
const time = (at: string) => `<time datetime="${at}">${utc(at)}</time>`;

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

const STATE_TEXT: Record<ProbeState, string> = {
  up: "Operational",
  degraded: "Degraded",
  down: "Down",
  unknown: "No recent result",
};

const BANNER: Record<ProbeState, string> = {
  up: "All checks are operational",
  degraded: "Some checks are degraded",
  down: "Some checks are down",
  unknown: "Some checks have no recent result",
};

/** A day's bar: `ok` from 99.9 %, `warn` from 99 %, `bad` below; `maint` or `none` without runs. */
function dayClass(day: StatusPageDay): string {
  if (day.uptime === null) return day.maintenance > 0 ? "maint" : "none";
  return day.uptime >= 0.999 ? "ok" : day.uptime >= 0.99 ? "warn" : "bad";
}

function dayText(day: StatusPageDay): string {
  const parts = [day.date];
  parts.push(
    day.uptime === null ? "no counted runs" : `${percent(day.uptime)} up over ${day.runs} runs`,
  );
  if (day.maintenance > 0) parts.push(`${day.maintenance} runs in maintenance`);
  return parts.join(", ");
}

// Light by default, dark when the system says so; the last 30 days only on narrow screens.
const CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;
--card:#f6f8fa;--ok:#1a7f37;--warn:#9a6700;--bad:#cf222e;--none:#c8d1da;--maint:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;
--line:#3d444d;--card:#151b23;--ok:#3fb950;--warn:#d29922;--bad:#f85149;--none:#3d444d;
--maint:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:56rem;margin:0 auto;padding:1.5rem 1rem 3rem}
h1{font-size:1.75rem;margin:0 0 .25rem;overflow-wrap:anywhere}
h2{font-size:1.25rem;margin:2rem 0 .75rem}
h3{font-size:1rem;margin:0;overflow-wrap:anywhere}
p{margin:.25rem 0}
.muted{color:var(--muted)}
.banner{margin-top:1.25rem;padding:.75rem 1rem;border-radius:.5rem;border-left:.4rem solid;
background:var(--card);font-weight:600}
.s-up{border-color:var(--ok)}.s-degraded{border-color:var(--warn)}.s-down{border-color:var(--bad)}
.s-unknown{border-color:var(--none)}
ul.probes,ul.incidents{list-style:none;margin:0;padding:0}
.probe{border:1px solid var(--line);border-radius:.5rem;padding:.75rem 1rem;margin-bottom:.75rem}
.head{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25rem 1rem;align-items:baseline}
.state{font-size:.875rem;font-weight:600;white-space:nowrap}
.state::before{content:"";display:inline-block;width:.6rem;height:.6rem;border-radius:50%;
margin-right:.35rem;background:var(--none)}
.st-up::before{background:var(--ok)}.st-degraded::before{background:var(--warn)}
.st-down::before{background:var(--bad)}
.url{font-size:.875rem;color:var(--muted);overflow-wrap:anywhere}
ol.bars{display:flex;gap:1px;height:2rem;margin:.6rem 0 .25rem;padding:0;list-style:none}
ol.bars li{flex:1;min-width:0;border-radius:1px;background:var(--none)}
ol.bars .ok{background:var(--ok)}ol.bars .warn{background:var(--warn)}
ol.bars .bad{background:var(--bad)}ol.bars .maint{background:var(--maint)}
.axis{display:flex;justify-content:space-between;font-size:.8rem;color:var(--muted)}
.d30{display:none}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.incidents li{border-bottom:1px solid var(--line);padding:.6rem 0}
footer{margin-top:2.5rem;font-size:.875rem;color:var(--muted)}
a{color:var(--maint)}
@media (max-width:40rem){ol.bars li:nth-child(-n+${STATUS_PAGE_DAYS - 30}){display:none}
.d90{display:none}.d30{display:inline}}
`.trim();

/**
 * The CSP allows this one stylesheet (by its digest), the page's own script (`live.js`, same
 * origin, no inline script) and that script's fetch of the page, and nothing else.
 */
const CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(CSS).digest("base64")}'`,
  "script-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/** The share of counted runs that passed over some days; null without counted runs. */
function uptimeOf(days: StatusPageDay[]): number | null {
  const runs = days.reduce((sum, day) => sum + day.runs, 0);
  const passed = days.reduce((sum, day) => sum + (day.uptime ?? 0) * day.runs, 0);
  return runs === 0 ? null : passed / runs;
}

function probeHtml(probe: PublicStatusPage["probes"][number]): string {
  const bars = probe.days.map((day) => {
    const text = escapeHtml(dayText(day));
    return `<li class="${dayClass(day)}" title="${text}"><span class="sr">${text}</span></li>`;
  }).join("");
  // Narrow screens show the last 30 bars: the figure beside them is of those 30 days.
  const recent = uptimeOf(probe.days.slice(-30));
  const uptime = (share: number | null, days: number) =>
    share === null ? "No runs" : `${percent(share)} uptime, ${days} days`;
  return `<li class="probe">
<div class="head"><h3>${escapeHtml(probe.name)}</h3>` +
    `<span class="state st-${probe.state}">${STATE_TEXT[probe.state]}</span>` +
    (probe.flapping ? `<span class="state st-degraded">Unstable</span>` : "") + `</div>
${probe.url === null ? "" : `<p class="url">${escapeHtml(probe.url)}</p>\n`}` +
    locationsHtml(probe) +
    `<ol class="bars" aria-label="Uptime per day, UTC">${bars}</ol>
<div class="axis"><span><span class="d90">${STATUS_PAGE_DAYS} days ago</span>` +
    `<span class="d30">30 days ago</span></span><span><span class="d90">${
      uptime(probe.uptime, STATUS_PAGE_DAYS)
    }</span><span class="d30">${uptime(recent, 30)}</span></span><span>Today</span></div>
</li>`;
}

/**
 * From more than one place, when the page shows locations: each one's state on a labelled line
 * (`Locations: local: Operational · office: Down`).
 */
function locationsHtml(probe: PublicStatusPage["probes"][number]): string {
  if (probe.locations.length < 2) return "";
  const parts = probe.locations.map((l) =>
    `${escapeHtml(l.location)}: <span class="st-${l.state}">${STATE_TEXT[l.state]}</span>`
  );
  return `<p class="url locations">Locations: ${parts.join(" · ")}</p>\n`;
}

function incidentHtml(incident: PublicStatusPage["incidents"][number]): string {
  const span = incident.resolved_at === null
    ? `Started ${time(incident.started_at)}, ongoing`
    : `Started ${time(incident.started_at)}, ended ${time(incident.resolved_at)}, lasted ${
      duration(incident.duration_seconds ?? 0)
    }`;
  const state = incident.state === "open" ? "Ongoing" : "Resolved";
  return `<li><h3>${escapeHtml(incident.probe)} <span class="state st-${
    incident.state === "open" ? "down" : "up"
  }">${state}</span></h3><p class="muted">${span}</p></li>`;
}

const runs = (n: number, what: string) => (n === 1 ? `1 ${what}` : `${n} ${what}s`);

/** How incidents open and close, in one short sentence. */
export function incidentRuleText(rule: PublicStatusPage["incident_rule"]): string {
  const opens = rule.failures === 1
    ? "at the first failed check"
    : `after ${runs(rule.failures, "failed check")} in a row`;
  const closes = rule.passes === 1
    ? "at the first passing one"
    : `after ${runs(rule.passes, "passing check")}`;
  return `An incident opens ${opens} and closes ${closes}.`;
}

/**
 * The page as HTML: every text escaped, no inline script or style but the hashed sheet. Its
 * script (`live.js`) fetches it again every minute and swaps the parts marked `data-live`; the
 * page never reloads itself (a timed reload moves the reader and fails WCAG 2.2.1).
 */
export function renderStatusPage(page: PublicStatusPage, jsonPath: string): string {
  const banner = page.probes.length === 0 ? "No checks yet" : BANNER[page.status];
  const probes = page.probes.length === 0
    ? `<p class="muted">This page shows no checks yet.</p>`
    : `<ul class="probes">\n${page.probes.map(probeHtml).join("\n")}\n</ul>`;
  const incidents = page.incidents.length === 0
    ? `<p class="muted">No incidents in the last ${STATUS_PAGE_DAYS} days.</p>`
    : `<ul class="incidents">\n${page.incidents.map(incidentHtml).join("\n")}\n</ul>`;
  const rule = page.incident_rule;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(page.title)} status</title>
<style>${CSS}</style>
<script src="${escapeHtml(jsonPath.slice(0, -JSON_SUFFIX.length))}${LIVE_SUFFIX}" defer></script>
</head>
<body>
<main>
<header>
<h1>${escapeHtml(page.title)}</h1>
${page.description === null ? "" : `<p class="muted">${escapeHtml(page.description)}</p>\n`}\
</header>
<div data-live="state">
<p class="banner s-${page.probes.length === 0 ? "unknown" : page.status}">${banner}</p>
${page.in_maintenance ? `<p class="muted">Maintenance is under way.</p>\n` : ""}</div>
<section aria-labelledby="checks">
<h2 id="checks">Checks</h2>
<div data-live="checks">${probes}</div>
</section>
<section aria-labelledby="incidents">
<h2 id="incidents">Recent incidents</h2>
<p class="muted rule">${incidentRuleText(rule)}</p>
<div data-live="incidents">${incidents}</div>
</section>
<footer>
<p data-live="updated">Updated ${time(page.generated_at)}. Days and times are UTC. ` +
    `<a href="${escapeHtml(jsonPath)}">This page as JSON</a>.</p>
</footer>
</main>
</body>
</html>
`;
}

interface Rendered {
  html: string;
  json: string;
}

type Form = "html" | "json" | "script";

/** The project and the form a path under `/status/` asks for; null for any other path. */
function parse(path: string): { project: string; form: Form } | null {
  if (!path.startsWith(STATUS_PREFIX)) return null;
  let rest = path.slice(STATUS_PREFIX.length);
  let form: Form = "html";
  for (const [suffix, named] of [[JSON_SUFFIX, "json"], [LIVE_SUFFIX, "script"]] as const) {
    if (rest.endsWith(suffix)) [rest, form] = [rest.slice(0, -suffix.length), named];
  }
  // `/status/shop.json` is the page of a project named `shop.json`.
  if (rest.length > 64 || !PROJECT_NAME_PATTERN.test(rest)) return null;
  return { project: rest, form };
}

const HTML_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": CSP,
  "referrer-policy": "no-referrer",
};
const SCRIPT_HEADERS = { "content-type": "text/javascript; charset=utf-8" };
const JSON_HEADERS = {
  "content-type": "application/json",
  // Public data, read without credentials: any site may read it from a browser.
  "access-control-allow-origin": "*",
};

/**
 * Serves `GET` (and `HEAD`) `/status/{project}` and `/status/{project}/status.json` for public
 * pages; null for everything else, private pages and missing projects included.
 */
export function createStatusPages(
  { db, now = Date.now, ttlMs = PUBLIC_CACHE_MS }: {
    db: Db;
    /** The clock of the pages and of their cache. */
    now?: () => number;
    ttlMs?: number;
  },
): PublicPage {
  const cache = new TtlCache<Rendered | null>({ ttlMs, now });
  return async (request, url) => {
    if (!isRead(request.method)) return null;
    const wanted = parse(url.pathname);
    if (!wanted) return null;
    const { project } = wanted;
    let rendered: Rendered | null;
    try {
      rendered = await cache.get(project, statusPagesVersion(db), async () => {
        const page = await publicStatusPage({ db, project, now: now() });
        if (!page) return null;
        return {
          html: renderStatusPage(page, `${STATUS_PREFIX}${project}${JSON_SUFFIX}`),
          json: JSON.stringify(page),
        };
      });
    } catch (error) {
      return publicFailure(error);
    }
    if (!rendered) return null;
    if (wanted.form === "json") return publicAnswer(request, rendered.json, JSON_HEADERS);
    if (wanted.form === "script") return publicAnswer(request, LIVE_SCRIPT, SCRIPT_HEADERS);
    return publicAnswer(request, rendered.html, HTML_HEADERS);
  };
}
