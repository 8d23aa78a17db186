// Reads how the dashboard's overview shows a probe the network policy refuses, in headless
// Chromium, for e2e/dashboard_blocked_test.ts, which runs it as a subprocess:
//
//   deno run -A e2e/testdata/blocked_browser.ts '<BlockedArgs as JSON>'
//
// Its last line on stdout is `{"report": …}`.
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";
import { type AxeFinding, axeScan, watch } from "./dashboard_browser.ts";

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
    };
    watch(page, new URL(args.baseUrl).origin, report);
    await page.goto(`${args.baseUrl}/`);
    await page.getByLabel("API key").fill(args.apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
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
    return report;
  } finally {
    await browser.close();
  }
}

if (import.meta.main) {
  const report = await run(JSON.parse(Deno.args[0]));
  console.log(JSON.stringify({ report }));
  Deno.exit(0);
}
