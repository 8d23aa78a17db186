/**
 * The dashboard (docs/dashboard.md): the page at `/`, our own ES modules and styles from
 * `server/ui/` under `/ui/`, and the browser builds of Preact, htm and uPlot, served from their
 * npm packages' files under `/ui/vendor/` (no CDN, no build step). None of it needs the API key:
 * the page asks for the key and sends it with each call to `/api/v1`.
 *
 * @module
 */
// Imported for their files, not their code: a static import puts each package in the module
// graph, so Deno fetches it with the rest (`import.meta.resolve` alone fetches nothing).
import "preact";
import "preact/hooks";
import "htm";
import "uplot";
import type { PublicPage } from "./edge_types.ts";
import { isRead } from "./methods.ts";
import { serverFile } from "../base/files.ts";

export const DASHBOARD_PATH = "/";
export const UI_PREFIX = "/ui/";
const VENDOR_PREFIX = `${UI_PREFIX}vendor/`;

/** The packages' browser files, by the name they are served under (`/ui/vendor/<name>`). */
const VENDOR_FILES: Record<string, string> = {
  "preact.mjs": import.meta.resolve("preact"),
  "preact-hooks.mjs": import.meta.resolve("preact/hooks"),
  "htm.mjs": import.meta.resolve("htm"),
  "uplot.mjs": import.meta.resolve("uplot/dist/uPlot.esm.js"),
  "uplot.css": import.meta.resolve("uplot/dist/uPlot.min.css"),
};

/** The bare names our modules import, as the page's import map resolves them. */
export const IMPORT_MAP = {
  imports: {
    "preact": `${VENDOR_PREFIX}preact.mjs`,
    "preact/hooks": `${VENDOR_PREFIX}preact-hooks.mjs`,
    "htm": `${VENDOR_PREFIX}htm.mjs`,
    "uplot": `${VENDOR_PREFIX}uplot.mjs`,
  },
};

const UI_DIR = serverFile("ui/");
/** What `server/ui/` may serve: flat names, by extension. */
const UI_FILE = /^[a-z0-9][a-z0-9_-]*\.(js|mjs|css|svg)$/;
const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};
const ENTRY = "boot.js";

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

interface Loaded {
  /** By path: `/ui/app.js`, `/ui/vendor/preact.mjs`. */
  assets: Map<string, Asset>;
  html: string;
  csp: string;
}

const typeOf = (name: string) => TYPES[name.slice(name.lastIndexOf(".") + 1)];

async function sha256(data: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
}

async function asset(body: Uint8Array<ArrayBuffer>, type: string): Promise<Asset> {
  const digest = await sha256(body);
  const hex = Array.from(digest.slice(0, 12), (b) => b.toString(16).padStart(2, "0")).join("");
  return { body, type, etag: `"${hex}"` };
}

/**
 * The page's Content-Security-Policy: scripts from this origin and the inline import map (by its
 * hash) only, no `eval`; styles from this origin only (uPlot and Preact set styles through the
 * CSSOM, which a policy does not govern); no framing.
 */
export function contentSecurityPolicy(importMapHash: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' '${importMapHash}'`,
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The modules the entry needs first: the API call starts as soon as they are in. */
const FIRST_MODULES = [`${UI_PREFIX}api.js`];

function page(importMap: string, modules: string[]): string {
  const preload = (path: string) => `<link rel="modulepreload" href="${path}">`;
  // The entry and the API client first, then the styles, then the modules the page draws with.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Probe monitor</title>
<script type="importmap">${importMap}</script>
<script type="module" async src="${UI_PREFIX}${ENTRY}"></script>
${FIRST_MODULES.map(preload).join("\n")}
<link rel="stylesheet" href="${VENDOR_PREFIX}uplot.css">
<link rel="stylesheet" href="${UI_PREFIX}dashboard.css">
<link rel="stylesheet" href="${UI_PREFIX}settings.css">
<link rel="icon" type="image/svg+xml" href="${UI_PREFIX}icon.svg">
${modules.filter((path) => !FIRST_MODULES.includes(path)).map(preload).join("\n")}
</head>
<body>
<div id="app"><noscript><p>The dashboard needs JavaScript. The API is described at <a href="/docs">/docs</a>.</p></noscript></div>
</body>
</html>
`;
}

async function load(): Promise<Loaded> {
  const assets = new Map<string, Asset>();
  const ours: string[] = [];
  for await (const entry of Deno.readDir(UI_DIR)) {
    if (entry.isFile && UI_FILE.test(entry.name)) ours.push(entry.name);
  }
  for (const name of ours.sort()) {
    const body = await Deno.readFile(new URL(name, UI_DIR));
    assets.set(`${UI_PREFIX}${name}`, await asset(body, typeOf(name)));
  }
  for (const [name, url] of Object.entries(VENDOR_FILES)) {
    const body = await Deno.readFile(new URL(url));
    assets.set(`${VENDOR_PREFIX}${name}`, await asset(body, typeOf(name)));
  }
  const importMap = JSON.stringify(IMPORT_MAP);
  const hash = `sha256-${
    btoa(String.fromCharCode(...await sha256(new TextEncoder().encode(importMap))))
  }`;
  // Every module the page may need, fetched at once rather than import by import.
  const modules = [...assets.entries()]
    .filter(([path, { type }]) => type.startsWith("text/javascript") && path !== UI_PREFIX + ENTRY)
    .map(([path]) => path);
  return { assets, html: page(importMap, modules), csp: contentSecurityPolicy(hash) };
}

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
};

/**
 * Answers `GET /` with the page and `GET /ui/…` with its files, and null for anything else (an
 * unknown file under `/ui/` is left to the handler's 404). Files are read once, on first use.
 */
export function createDashboard(): PublicPage {
  let loaded: Promise<Loaded> | undefined;
  const files = () => {
    loaded ??= load();
    loaded.catch(() => (loaded = undefined));
    return loaded;
  };
  return async (request, url) => {
    if (!isRead(request.method)) return null;
    const path = url.pathname;
    if (path !== DASHBOARD_PATH && !path.startsWith(UI_PREFIX)) return null;
    const { assets, html, csp } = await files();
    const head = request.method === "HEAD";
    if (path === DASHBOARD_PATH) {
      return new Response(head ? null : html, {
        headers: { ...PAGE_HEADERS, "content-security-policy": csp },
      });
    }
    const file = assets.get(path);
    if (!file) return null;
    // Revalidated on each load (a restart may bring other files), answered 304 when unchanged.
    const headers = {
      "content-type": file.type,
      "x-content-type-options": "nosniff",
      "cache-control": "no-cache",
      etag: file.etag,
    };
    if (request.headers.get("if-none-match") === file.etag) {
      return new Response(null, { status: 304, headers });
    }
    if (head) {
      return new Response(null, {
        headers: { ...headers, "content-length": String(file.body.byteLength) },
      });
    }
    return new Response(file.body.slice(), { headers });
  };
}
