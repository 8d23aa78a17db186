// Loads a public status page in headless Chromium for e2e/status_page_test.ts, which runs it as
// a subprocess: once with JavaScript off (the page must need none), once with it on for an
// axe-core scan. Prints one JSON line: what the page showed, the scan's serious and critical
// findings, and the screenshots written.
//
//   deno run -A e2e/testdata/status_page_browser.ts <chromium> <page URL> <screenshot dir>
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";

const [executablePath, pageUrl, shotDir] = Deno.args;
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

  const scanned = await browser.newContext({ colorScheme: "dark" });
  const scanPage = await scanned.newPage();
  // axe's meta-refresh rule fails any timed reload, whether or not the page lets a visitor turn
  // it off (WCAG 2.2.1's "turn off" option, which axe cannot see): the reloading page is scanned
  // without that rule, and the page its "Stop reloading" link leads to with every rule.
  const scan = async (url: string, rules: Record<string, { enabled: boolean }>) => {
    await scanPage.goto(url);
    await scanPage.evaluate(axeSource);
    return await scanPage.evaluate(async (rules) => {
      // deno-lint-ignore no-explicit-any
      const axe = (globalThis as any).axe;
      const found = await axe.run(document, { resultTypes: ["violations"], rules });
      // deno-lint-ignore no-explicit-any
      return found.violations.map((v: any) => ({ id: v.id, impact: v.impact ?? "" }));
    }, rules);
  };
  const stillUrl = new URL(
    (await page.getAttribute('a:text("Stop reloading")', "href")) ?? "",
    pageUrl,
  ).href;
  const refreshes = (await page.locator('meta[http-equiv="refresh"]').getAttribute("content")) ??
    null;
  const findings = [
    ...await scan(pageUrl, { "meta-refresh": { enabled: false } }),
    ...await scan(stillUrl, {}),
  ];
  const stillRefresh = await scanPage.locator('meta[http-equiv="refresh"]').count();
  const darkShot = `${shotDir}/status-page-dark.png`;
  await scanPage.screenshot({ path: darkShot, fullPage: true });
  console.log(JSON.stringify({
    status: response?.status() ?? null,
    text,
    scripts,
    overflow,
    refreshes,
    stillUrl,
    stillRefresh,
    consoleErrors,
    blocking: findings.filter((f: { impact: string }) =>
      ["serious", "critical"].includes(f.impact)
    ),
    screenshots: [noJsShot, darkShot],
  }));
} finally {
  await browser.close();
}
