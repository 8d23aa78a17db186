// Reads how the dashboard's overview shows a probe the network policy refuses, in headless
// Chromium, for e2e/dashboard_blocked_test.ts, which runs it as a subprocess:
//
//   deno run -A e2e/testdata/blocked_browser.ts '<BlockedArgs as JSON>'
//
// Its last line on stdout is `{"report": …}`.
import { type Browser, chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";
import { type AxeFinding, axeScan, watch } from "./dashboard_browser.ts";
import { signInWithForm } from "./sign_in.ts";

export interface BlockedArgs {
  chromium: string;
  baseUrl: string;
  apiKey: string;
  /** The label of the blocked probe, and of a probe that runs. */
  blocked: string;
  running: string;
  shotDir: string;
}

/** A probe's row on the overview: its state cell and uptime cells as shown. */
export interface RowText {
  state: string;
  badge: string;
  uptime: string[];
}

export interface BlockedReport {
  blocked: RowText;
  running: RowText;
  axe: AxeFinding[];
  foreign: string[];
  csp: string[];
  pageErrors: string[];
  screenshot: string;
  /** The page a link opened right after signing in showed: its heading. */
  linkedRightAway: string;
}

async function run(args: BlockedArgs): Promise<BlockedReport> {
  const browser = await chromium.launch({ executablePath: args.chromium, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(20_000);
    const report: BlockedReport = {
      blocked: { state: "", badge: "", uptime: [] },
      running: { state: "", badge: "", uptime: [] },
      axe: [],
      foreign: [],
      csp: [],
      pageErrors: [],
      screenshot: `${args.shotDir}/overview-blocked.png`,
      linkedRightAway: "",
    };
    watch(page, new URL(args.baseUrl).origin, report);
    await signInWithForm(page, args.baseUrl, args.apiKey);
    const main = page.locator("main");
    const rowOf = async (label: string): Promise<RowText> => {
      const row = main.locator("tr", { has: page.getByRole("link", { name: label }) });
      await row.waitFor();
      return {
        state: await row.locator('td[data-label="State"]').innerText(),
        badge: await row.locator('td[data-label="State"] .state').innerText(),
        uptime: await row.locator("td .uptime").allInnerTexts(),
      };
    };
    report.blocked = await rowOf(args.blocked);
    report.running = await rowOf(args.running);
    report.axe = await axeScan(page, "overview with a blocked probe");
    await page.screenshot({ path: report.screenshot });
    report.linkedRightAway = await linkRightAway(browser, args);
    return report;
  } finally {
    await browser.close();
  }
}

/**
 * Signs in through the form and, as soon as the overview shows, opens the incidents page by its
 * link. The browser paints no frames here, so the dashboard's effects run only after Preact's
 * fallback timer: a navigation made before the route's listener exists must still be followed.
 * Answers the heading of the page shown.
 */
async function linkRightAway(browser: Browser, args: BlockedArgs): Promise<string> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.addInitScript(() => {
      globalThis.requestAnimationFrame = () => 0;
    });
    await signInWithForm(page, args.baseUrl, args.apiKey);
    await page.goto(`${args.baseUrl}/#/incidents`);
    const main = page.locator("main");
    const heading = main.getByRole("heading", { level: 1 });
    // The incidents page, or the overview still once it has had time to follow.
    await main.getByRole("heading", { level: 1, name: "Incidents" }).waitFor({ timeout: 3000 })
      .catch(() => {});
    return await heading.innerText();
  } finally {
    await context.close();
  }
}

if (import.meta.main) {
  const report = await run(JSON.parse(Deno.args[0]));
  console.log(JSON.stringify({ report }));
  Deno.exit(0);
}
