/**
 * The browser side of the browser tests: a script (`e2e/testdata/*_browser.ts`) launches Debian's
 * Chromium for its steps, closes it whatever happens, and, run as a subprocess by
 * `runBrowserScript`, takes its arguments as JSON and prints its report as `{"report": …}`.
 *
 * @module
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";
import { type AxeFinding, axeScan, watch } from "./dashboard_browser.ts";

/** Launches the Chromium at `executablePath`, runs `steps` with it, then closes it. */
export async function inChromium<R>(
  executablePath: string,
  steps: (browser: Browser) => Promise<R>,
): Promise<R> {
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  try {
    return await steps(browser);
  } finally {
    await browser.close();
  }
}

/** A script's entry: `run` with the JSON of its first argument, its report printed, then exit. */
export async function reportOf<A, R>(run: (args: A) => Promise<R>): Promise<never> {
  const report = await run(JSON.parse(Deno.args[0]));
  console.log(JSON.stringify({ report }));
  Deno.exit(0);
}

/**
 * What a walkthrough's report holds on its pages: axe-core's findings, requests to other origins,
 * CSP violations, page errors, and its screenshots' paths.
 */
export interface PageFindings {
  axe: AxeFinding[];
  foreign: string[];
  csp: string[];
  pageErrors: string[];
  screenshots: string[];
}

/** None yet, for a report's start. */
export const noFindings = (): PageFindings => ({
  axe: [],
  foreign: [],
  csp: [],
  pageErrors: [],
  screenshots: [],
});

/**
 * Watches `page` into `report` (other origins, CSP, errors) and answers what the steps use: the
 * page's `main` and main navigation, `shot(name)` (a PNG in `shotDir`, noted in the report) and
 * `scan(name)` (axe-core, its findings noted).
 */
export function pageTools(
  page: Page,
  { baseUrl, shotDir }: { baseUrl: string; shotDir: string },
  report: PageFindings,
) {
  watch(page, new URL(baseUrl).origin, report);
  return {
    main: page.locator("main"),
    nav: page.getByRole("navigation", { name: "Main" }),
    shot: async (name: string, fullPage = true) => {
      const path = `${shotDir}/${name}.png`;
      await page.screenshot({ path, fullPage });
      report.screenshots.push(path);
    },
    scan: async (name: string) => {
      report.axe.push(...await axeScan(page, name));
    },
  };
}

/**
 * The refusal a form shows beside `field` once submitted (the API's words under the field), and
 * the name of the field focused then (the form moves focus to the first refused one).
 */
export async function refusalBeside(
  page: Page,
  field: string,
): Promise<{ message: string; focused: string | null }> {
  const error = page.locator(`#field-${field}-error`);
  await error.waitFor();
  return {
    message: await error.innerText(),
    focused: await page.evaluate(() => document.activeElement?.getAttribute("name") ?? null),
  };
}
