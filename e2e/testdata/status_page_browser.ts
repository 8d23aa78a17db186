// Loads a public status page in headless Chromium for e2e/status_page_test.ts, which runs it as
// a subprocess: once with JavaScript off (the page must need none), once with it on: the probe
// is run then (POST <run URL> with <key>) and the page's script must show its new state without
// a reload; then an axe-core scan with every rule. Prints one JSON line: what the page showed,
// the scan's findings, and the screenshots written.
//
//   deno run -A e2e/testdata/status_page_browser.ts <chromium> <page URL> <screenshot dir> \
//     <run URL> <key>
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";

const [executablePath, pageUrl, shotDir, runUrl, key] = Deno.args;
const axeSource = Deno.readTextFileSync(new URL(import.meta.resolve("axe-core/axe.min.js")));

const browser = await chromium.launch({
  executablePath,
  args: CHROMIUM_ARGS,
});
try {
  const quiet = await browser.newContext({
    javaScriptEnabled: false,
    viewport: { width: 375, height: 800 },
  });
  const page = await quiet.newPage();
  const consoleErrors: string[] = [];
  page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
  const response = await page.goto(pageUrl);
  const text = await page.innerText("body");
  const scripts = await page.locator("script").count();
  const overflow = await page.evaluate(() =>
    document.documentElement.scrollWidth > document.documentElement.clientWidth
  ).catch(() => null); // evaluate runs through DevTools even with page scripts off
  const noJsShot = `${shotDir}/status-page-375px-no-js.png`;
  await page.screenshot({ path: noJsShot, fullPage: true });

  // With JavaScript on, under a fake clock: the page's script fetches new figures each minute
  // and swaps them in place. The probe is run (against a failing target) after the page loaded.
  const scanned = await browser.newContext({ colorScheme: "dark" });
  const scanPage = await scanned.newPage();
  scanPage.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
  let navigations = 0;
  scanPage.on("framenavigated", (frame) => frame === scanPage.mainFrame() && navigations++);
  await scanPage.clock.install();
  await scanPage.goto(pageUrl);
  const stateBefore = await scanPage.innerText('[data-live="checks"]');
  await scanPage.evaluate(() => Object.assign(globalThis, { stayed: true }));
  const ran = await fetch(runUrl, { method: "POST", headers: { "x-service-api-key": key } });
  await ran.body?.cancel();
  // The service keeps a page 15 s: a minute of the page's clock each real second, up to 30 s.
  let stateAfter = stateBefore;
  for (let i = 0; i < 30 && stateAfter === stateBefore; i++) {
    await scanPage.clock.fastForward(60_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    stateAfter = await scanPage.innerText('[data-live="checks"]');
  }
  const stayed = await scanPage.evaluate(() => "stayed" in globalThis);
  await scanPage.evaluate(axeSource);
  const findings = await scanPage.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const axe = (globalThis as any).axe;
    const found = await axe.run(document, { resultTypes: ["violations"] });
    // deno-lint-ignore no-explicit-any
    return found.violations.map((v: any) => ({ id: v.id, impact: v.impact ?? "" }));
  });
  const darkShot = `${shotDir}/status-page-dark.png`;
  await scanPage.screenshot({ path: darkShot, fullPage: true });
  console.log(JSON.stringify({
    status: response?.status() ?? null,
    text,
    scripts,
    overflow,
    refreshes: await page.locator('meta[http-equiv="refresh"]').count(),
    stateBefore,
    stateAfter,
    stayed,
    navigations,
    findings,
    consoleErrors,
    blocking: findings.filter((f: { impact: string }) =>
      ["serious", "critical"].includes(f.impact)
    ),
    screenshots: [noJsShot, darkShot],
  }));
} finally {
  await browser.close();
}
