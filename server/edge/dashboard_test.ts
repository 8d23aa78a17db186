import assert from "node:assert/strict";
import { apiSuite } from "../testing/app.ts";
import { createDashboard, IMPORT_MAP } from "./dashboard.ts";

const BASE = "http://service.test";
const UI_DIR = new URL("../ui/", import.meta.url);
const dashboard = createDashboard();

async function get(path: string, init: RequestInit = {}): Promise<Response> {
  const url = new URL(path, BASE);
  const answer = await dashboard(new Request(url, init), url);
  assert.ok(answer, `${path} is the dashboard's`);
  return answer;
}

/** The text of the page's inline import map, as the browser hashes it. */
function inlineImportMap(html: string): string {
  const found = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(found, "the page has an inline import map");
  return found[1];
}

async function sha256Base64(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

/** The `/ui/…` paths the page loads (scripts, style sheets, preloads, icon). */
function pathsIn(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((m) => m[1]);
}

/** Module specifiers a file imports or re-exports, statically or dynamically. */
function importsOf(source: string): string[] {
  const statement =
    /(?:^|[;\n}])\s*(?:import|export)\s*(?:[\w*{][^;"'`]*?\bfrom\s*)?["']([^"']+)["']/g;
  const dynamic = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
  const found = [...source.matchAll(statement), ...source.matchAll(dynamic)];
  return [...new Set(found.map((m) => m[1]))];
}

const TYPE_BY_EXTENSION: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};
const typeFor = (path: string) => TYPE_BY_EXTENSION[path.slice(path.lastIndexOf(".") + 1)];

Deno.test("GET / answers the page with a strict CSP that allows its import map by hash", async () => {
  const res = await get("/");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.equal(res.headers.get("cache-control"), "no-store");
  const html = await res.text();
  const csp = res.headers.get("content-security-policy") ?? "";
  const directives = Object.fromEntries(
    csp.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]),
  );
  assert.deepEqual(directives["default-src"], ["'self'"]);
  assert.deepEqual(directives["script-src"], [
    "'self'",
    `'sha256-${await sha256Base64(inlineImportMap(html))}'`,
  ]);
  assert.deepEqual(directives["style-src"], ["'self'"]);
  assert.deepEqual(directives["frame-ancestors"], ["'none'"]);
  assert.deepEqual(directives["object-src"], ["'none'"]);
  assert.doesNotMatch(csp, /unsafe-(inline|eval)|https?:/);
  // The only inline script is the import map: every other script has a src.
  const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>/g)].map((m) => m[0]);
  assert.deepEqual(inline, ['<script type="importmap">']);
  assert.deepEqual(JSON.parse(inlineImportMap(html)), IMPORT_MAP);
});

Deno.test("every file the page names is served with its type, revalidated by ETag", async () => {
  const html = await (await get("/")).text();
  const paths = pathsIn(html);
  assert.ok(paths.includes("/ui/boot.js") && paths.includes("/ui/vendor/uplot.css"));
  for (const path of [...paths, ...Object.values(IMPORT_MAP.imports)]) {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("content-type"), typeFor(path), path);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
    assert.equal(res.headers.get("cache-control"), "no-cache", path);
    const etag = res.headers.get("etag");
    assert.match(etag ?? "", /^"[0-9a-f]{24}"$/, path);
    assert.ok((await res.arrayBuffer()).byteLength > 0, path);
    const again = await get(path, { headers: { "if-none-match": etag! } });
    assert.equal(again.status, 304, path);
    assert.equal(await again.text(), "");
  }
});

/** Files of server/ui for `deno check` only (docs/dashboard.md, "Type checking"): never served. */
const TYPE_CHECK_ONLY = /^deno\.json$|\.d\.ts$|\.gen\.ts$/;

Deno.test("every file of server/ui is served as it is on disk", async () => {
  let files = 0;
  for await (const entry of Deno.readDir(UI_DIR)) {
    if (TYPE_CHECK_ONLY.test(entry.name)) continue;
    const res = await get(`/ui/${entry.name}`);
    assert.equal(res.status, 200, entry.name);
    assert.equal(res.headers.get("content-type"), typeFor(entry.name), entry.name);
    assert.deepEqual(
      new Uint8Array(await res.arrayBuffer()),
      await Deno.readFile(new URL(entry.name, UI_DIR)),
    );
    files++;
  }
  assert.ok(files >= 10);
});

Deno.test("every module the page loads imports only what the import map or /ui/ serves", async () => {
  const html = await (await get("/")).text();
  const mapped = IMPORT_MAP.imports as Record<string, string>;
  const modules = pathsIn(html).filter((p) => p.endsWith(".js") || p.endsWith(".mjs"));
  for (const path of modules) {
    const source = await (await get(path)).text();
    for (const specifier of importsOf(source)) {
      const target = specifier.startsWith("./") || specifier.startsWith("../")
        ? new URL(specifier, new URL(path, BASE)).pathname
        : mapped[specifier];
      assert.ok(target, `${path} imports ${specifier}, which the import map lacks`);
      const res = await get(target);
      assert.equal(res.status, 200, `${path} imports ${specifier} (${target})`);
      await res.body?.cancel();
    }
  }
});

Deno.test("HEAD answers the headers alone; other methods and paths are not the dashboard's", async () => {
  const head = await get("/ui/app.js", { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal(await head.text(), "");
  for (
    const [method, path] of [
      ["POST", "/"],
      ["DELETE", "/ui/app.js"],
      ["GET", "/ui/missing.js"],
      ["GET", "/ui/vendor/"],
      ["GET", "/ui/vendor/preact.mjs.map"],
      ["GET", "/ui/view.js/x"],
      ["GET", "/index.html"],
      ["GET", "/api/v1/projects"],
    ]
  ) {
    const url = new URL(path, BASE);
    assert.equal(await dashboard(new Request(url, { method }), url), null, `${method} ${path}`);
  }
});

apiSuite("the dashboard through the service's handler", (test) => {
  test("/ answers the page without a key; an unknown asset is a 404", async ({ api }) => {
    const page = await api.get("/", { key: null });
    assert.equal(page.status, 200);
    assert.match(page.text, /<div id="app">/);
    assert.ok(page.headers.get("content-security-policy"));
    const asset = await api.get("/ui/app.js", { key: null });
    assert.equal(asset.status, 200);
    assert.equal(asset.headers.get("content-type"), "text/javascript; charset=utf-8");

    const paths = ["/ui/missing.js", "/ui/../deno.json", "/ui/vendor/axe.min.js"];
    // What server/ui holds for `deno check` only is not served either.
    paths.push("/ui/deno.json", "/ui/api_types.d.ts", "/ui/htm.d.ts");
    for (const path of paths) {
      const missing = await api.get(path, { key: null });
      assert.equal(missing.status, 404, path);
      assert.equal(missing.body.error.code, "not_found", path);
      assert.equal(missing.headers.get("cache-control"), "no-store", path);
    }
    // The API still needs its key.
    assert.equal((await api.get("/api/v1/overview", { key: null })).status, 401);
  });
});
