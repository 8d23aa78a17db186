// Drives /docs in headless Chromium for server/docs_test.ts, which runs it as a subprocess:
// playwright-core probes paths under /proc when it loads, and Deno grants those only with
// --allow-all, which the test run itself does not have. Prints a JSON report on stdout.
//
//   deno run -A e2e/testdata/docs_browser.ts CHROMIUM BASE_URL API_KEY PROJECT SCREENSHOT_DIR
import { chromium, type Locator, type Page } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";

const TIMEOUT_MS = 20_000;

export interface DocsReport {
  /** `METHOD /path` of every operation the page shows. */
  listed: string[];
  /** The status the page shows for a call made before a key was entered. */
  withoutKey: string;
  /** The status and body the page shows for a project create made with the key. */
  created: { status: string; body: string };
  /** Requests the page made to other origins. */
  foreign: string[];
  pageErrors: string[];
  screenshots: string[];
}

/** Opens an operation, runs Execute ("Try it out" is on), and answers the status shown. */
async function execute(page: Page, operationId: string, body?: unknown): Promise<Locator> {
  const op = page.locator(`#operations-${operationId}`);
  if (!(await op.locator("button.execute").isVisible())) {
    await op.locator(".opblock-summary-control").click();
  }
  if (body !== undefined) {
    await op.locator("textarea.body-param__text").fill(JSON.stringify(body));
  }
  await op.locator("button.execute").click();
  const response = op.locator(".live-responses-table .response").first();
  await response.waitFor({ timeout: TIMEOUT_MS });
  return response;
}

async function main(
  [executablePath, baseUrl, apiKey, project, shotDir]: string[],
): Promise<DocsReport> {
  const report: DocsReport = {
    listed: [],
    withoutKey: "",
    created: { status: "", body: "" },
    foreign: [],
    pageErrors: [],
    screenshots: [],
  };
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(TIMEOUT_MS);
    const origin = new URL(baseUrl).origin;
    page.on("request", (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) report.foreign.push(r.url());
    });
    page.on("pageerror", (e) => report.pageErrors.push(e.message));
    const shot = async (target: Page | Locator, name: string) => {
      const path = `${shotDir}/${name}.png`;
      if ("goto" in target) await target.screenshot({ path, fullPage: true });
      else await target.screenshot({ path });
      report.screenshots.push(path);
    };

    await page.goto(`${baseUrl}/docs`);
    await page.locator(".opblock").first().waitFor();
    await shot(page, "docs");
    report.listed = await page.locator(".opblock-summary").evaluateAll((blocks) =>
      blocks.map((b) =>
        `${b.querySelector(".opblock-summary-method")?.textContent} ${
          b.querySelector(".opblock-summary-path")?.getAttribute("data-path")
        }`
      )
    );

    const refused = await execute(page, "settings-settings-getIamAlive");
    report.withoutKey = (await refused.locator(".response-col_status").innerText()).trim();

    await page.locator("button.authorize").first().click();
    await page.locator("#api_key_value").fill(apiKey);
    await page.locator(".auth-container button[type=submit]").click();
    await page.locator(".auth-container button.btn-done").click();

    const created = await execute(page, "projects-projects-create", { project });
    report.created = {
      status: (await created.locator(".response-col_status").innerText()).trim(),
      body: await created.locator(".response-col_description pre").first().innerText(),
    };
    await shot(page.locator("#operations-projects-projects-create"), "docs-try-it");
  } finally {
    await browser.close();
  }
  return report;
}

if (import.meta.main) {
  console.log(JSON.stringify(await main(Deno.args)));
}
