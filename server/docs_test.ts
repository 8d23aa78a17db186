// The reference page at /docs in a real headless Chromium (Debian's `chromium`, which .ci/run
// installs), driven by playwright-core: it must list every endpoint, and calls made from it
// with a key entered in its Authorize dialog must succeed.
import assert from "node:assert/strict";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { uniqueName } from "./testing.ts";
import { startLiveServer } from "./testing_live.ts";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const TIMEOUT_MS = 20_000;

const hasChromium = (() => {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
})();
// CI installs Chromium, so there a missing one is a failure; elsewhere the test says it skipped.
const inCi = Boolean(Deno.env.get("CI"));
if (!hasChromium && !inCi) {
  console.warn(`docs_test: ${CHROMIUM} is missing, /docs is not tested (apt-get install chromium)`);
}

let screenshotDir: string | undefined;

/** Keeps a picture of the page for whoever debugs this test: DOCS_SCREENSHOT_DIR or a temp dir. */
async function screenshot(target: Page | Locator, name: string): Promise<void> {
  screenshotDir ??= Deno.env.get("DOCS_SCREENSHOT_DIR") ??
    await Deno.makeTempDir({ prefix: "docs-screenshots-" });
  await Deno.mkdir(screenshotDir, { recursive: true });
  const path = `${screenshotDir}/${name}.png`;
  if ("goto" in target) await target.screenshot({ path, fullPage: true });
  else await target.screenshot({ path });
  console.log(`screenshot: ${path}`);
}

/** Opens an operation, runs "Try it out" → Execute, and answers the status shown. */
async function execute(page: Page, operationId: string, body?: unknown): Promise<string> {
  const op = page.locator(`#operations-${operationId}`);
  await op.locator(".opblock-summary-control").click();
  if (body !== undefined) {
    await op.locator("textarea.body-param__text").fill(JSON.stringify(body));
  }
  await op.locator("button.execute").click();
  const status = op.locator(".live-responses-table .response .response-col_status").first();
  await status.waitFor({ timeout: TIMEOUT_MS });
  return (await status.innerText()).trim();
}

Deno.test({
  name: "/docs lists every endpoint and calls made from it succeed (headless Chromium)",
  ignore: !hasChromium && !inCi,
  async fn() {
    assert.ok(hasChromium, `${CHROMIUM} is missing: .ci/run installs it with apt-get`);
    const server = await startLiveServer();
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.setDefaultTimeout(TIMEOUT_MS);
      const origin = new URL(server.url).origin;
      const foreign: string[] = [];
      page.on("request", (r) => {
        if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) foreign.push(r.url());
      });
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));

      await page.goto(`${server.url}/docs`);
      await page.locator(".opblock").first().waitFor();
      await screenshot(page, "docs");

      const doc = await (await fetch(`${server.url}/api/v1/openapi.json`)).json();
      const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.keys(item as object).map((m) => `${m.toUpperCase()} ${path}`)
      ).sort();
      const listed = await page.locator(".opblock-summary").evaluateAll((blocks) =>
        blocks.map((b) =>
          `${b.querySelector(".opblock-summary-method")?.textContent} ${
            b.querySelector(".opblock-summary-path")?.getAttribute("data-path")
          }`
        )
      );
      assert.deepEqual(listed.sort(), documented);

      // Without a key the service refuses the call made from the page.
      assert.equal(await execute(page, "settings-settings-getIamAlive"), "401");

      await page.locator("button.authorize").first().click();
      await page.locator("#api_key_value").fill(server.apiKey);
      await page.locator(".auth-container button[type=submit]").click();
      await page.locator(".auth-container button.btn-done").click();

      const project = uniqueName("docs");
      assert.equal(await execute(page, "projects-projects-create", { project }), "201");
      const reply = page.locator("#operations-projects-projects-create .live-responses-table")
        .locator(".response-col_description pre").first();
      assert.match(await reply.innerText(), new RegExp(project));
      await screenshot(page.locator("#operations-projects-projects-create"), "docs-try-it");

      // The project really is there.
      const check = await fetch(`${server.url}/api/v1/projects/${project}`, {
        headers: { "x-service-api-key": server.apiKey },
      });
      assert.equal(check.status, 200);
      await check.body?.cancel();

      assert.deepEqual(foreign, [], "the page loads nothing from other hosts");
      assert.deepEqual(pageErrors, []);
    } finally {
      await browser?.close();
      await server.close();
    }
  },
});
