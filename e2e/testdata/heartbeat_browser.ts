// A new user's heartbeat, set up from the dashboard in headless Chromium, for
// e2e/heartbeat_dashboard_test.ts, which runs it as a subprocess:
//
//   deno run -A e2e/testdata/heartbeat_browser.ts '<HeartbeatArgs as JSON>'
//
// It asks the test (`{"ask": …}` on stdout) to start pinging the URL it copied, then to stop;
// its last line on stdout is `{"report": …}`; progress goes to stderr.
import type { Locator, Page } from "playwright-core";
import * as script from "./browser_script.ts";
import { ask } from "./dashboard_browser.ts";
import { signInAlertingTo } from "./alerting_setup.ts";
import { signInWithForm } from "./sign_in.ts";

export interface HeartbeatArgs {
  chromium: string;
  baseUrl: string;
  apiKey: string;
  /** A key of SERVICE_API_KEYS_READONLY. */
  readKey: string;
  project: string;
  heartbeat: string;
  periodSeconds: number;
  graceSeconds: number;
  hookUrl: string;
  shotDir: string;
}

export interface HeartbeatReport extends script.PageFindings {
  /** The period the form refused (under 10 s): its message beside the field. */
  periodRefused: { message: string; focused: string | null };
  /** What Copy put on the clipboard, and what the box shows. */
  copied: string;
  shown: string;
  /** Once pinged: the state, the facts, the pings listed. */
  up: {
    state: string;
    facts: string;
    pings: number;
    snippets: string[];
    /** The latest ping's body as the page shows it, and the images in it (none: it is text). */
    body: { text: string; images: number };
  };
  /** The project's page: the heartbeat's row. */
  projectRow: string;
  /** Once silent: the state and the incident's cause. */
  down: { state: string; cause: string };
  /** Where the overview's heartbeat row and its open incident's link lead (the address's hash). */
  overviewRow: string;
  incidentLink: string;
  /** The heartbeat's page for a read-only key: what it shows of the ping URL. */
  readOnly: { url: string; copyButtons: number; snippets: number; edit: number };
}

const log = (text: string) => console.error(`heartbeat_browser: ${text}`);

/** Reloads until `what` shows, at most `ms`. */
async function reloadUntil(page: Page, what: Locator, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      await what.waitFor({ timeout: 1_500 });
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await page.reload();
    }
  }
}

function run(args: HeartbeatArgs): Promise<HeartbeatReport> {
  return script.inChromium(args.chromium, async (browser) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: new URL(args.baseUrl).origin,
    });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const report: HeartbeatReport = {
      periodRefused: { message: "", focused: null },
      copied: "",
      shown: "",
      up: { state: "", facts: "", pings: 0, snippets: [], body: { text: "", images: -1 } },
      projectRow: "",
      down: { state: "", cause: "" },
      overviewRow: "",
      incidentLink: "",
      readOnly: { url: "", copyButtons: -1, snippets: -1, edit: -1 },
      ...script.noFindings(),
    };
    const { main, nav, shot, scan } = script.pageTools(page, args, report);

    // Where alerts go: a webhook, named by the alert policy.
    await signInAlertingTo(page, args);
    log("target and policy set");

    // A project, then a heartbeat: a period under 10 s first, which the API refuses.
    await nav.getByRole("link", { name: "Overview" }).click();
    await main.getByRole("link", { name: "New project" }).click();
    await main.getByLabel("Name", { exact: true }).fill(args.project);
    await main.getByRole("button", { name: "Create project" }).click();
    await main.getByRole("heading", { name: args.project }).waitFor();
    await main.getByRole("link", { name: "Add heartbeat" }).click();
    await main.getByRole("heading", { name: "New heartbeat" }).waitFor();
    await main.getByLabel("Name", { exact: true }).fill(args.heartbeat);
    await main.getByLabel("Period (seconds)").fill("5");
    await main.getByLabel("Grace (seconds)").fill(String(args.graceSeconds));
    await main.getByRole("button", { name: "Create heartbeat" }).click();
    report.periodRefused = await script.refusalBeside(page, "period_seconds");
    await scan("heartbeat form refused");
    await main.getByLabel("Period (seconds)").fill(String(args.periodSeconds));
    await shot("heartbeat-form");
    await main.getByRole("button", { name: "Create heartbeat" }).click();
    await main.getByRole("heading", { name: args.heartbeat, exact: true }).waitFor();
    log("heartbeat created");

    // Its ping URL, copied with the button as a user would.
    await main.getByRole("button", { name: "Copy ping URL" }).click();
    await main.getByRole("status").filter({ hasText: "Copied." }).waitFor();
    report.copied = await page.evaluate(() => navigator.clipboard.readText());
    report.shown = await main.locator("#ping-url").inputValue();
    await ask({ ping: report.copied });

    // The job pings every second: the page shows it up, its pings and its snippets.
    const state = main.locator(".page-head .state");
    await reloadUntil(page, main.locator(".page-head .state", { hasText: "up" }), 20_000);
    await main.locator("section", { hasText: "Latest pings" }).locator("tbody tr").first()
      .waitFor();
    report.up = {
      state: await state.innerText(),
      facts: await main.locator("dl.facts").innerText(),
      pings: await main.locator("section", { hasText: "Latest pings" }).locator("tbody tr")
        .count(),
      snippets: await main.locator("details.snippet summary").allInnerTexts(),
      body: { text: "", images: -1 },
    };
    const body = main.locator("details.ping-body").first();
    await body.locator("summary").click();
    report.up.body = {
      text: await body.locator("pre").innerText(),
      images: await main.locator("details.ping-body img").count(),
    };
    await main.locator("details.snippet summary", { hasText: "systemd" }).click();
    await scan("heartbeat page");
    await shot("heartbeat-up");
    await main.getByRole("link", { name: args.project }).first().click();
    const row = main.locator("tr", { has: page.getByRole("link", { name: args.heartbeat }) });
    report.projectRow = (await row.innerText()).replace(/\s+/g, " ");
    await scan("project page with a heartbeat");
    await row.getByRole("link", { name: args.heartbeat }).click();
    await main.getByRole("heading", { name: args.heartbeat, exact: true }).waitFor();

    // The job stops: the test waits for the alert; the page then shows it down.
    await ask({ stop: true });
    await reloadUntil(page, main.locator(".page-head .state", { hasText: "down" }), 20_000);
    const incident = main.locator("section", { hasText: "Incidents" }).locator("tbody tr")
      .first();
    await incident.waitFor();
    report.down = {
      state: await state.innerText(),
      cause: await incident.locator('td[data-label="Cause"]').innerText(),
    };
    await shot("heartbeat-down");

    // The overview lists it with the probes; its row and its open incident lead to its page.
    await nav.getByRole("link", { name: "Overview" }).click();
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    const overviewRow = main.locator("tbody tr", {
      has: page.getByRole("link", { name: args.heartbeat, exact: true }),
    });
    await overviewRow.getByRole("link", { name: args.heartbeat, exact: true }).click();
    await main.getByRole("heading", { name: args.heartbeat, exact: true }).waitFor();
    report.overviewRow = new URL(page.url()).hash;
    await page.goBack();
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    await main.locator("section", { hasText: "Open incidents" })
      .getByRole("link", { name: args.heartbeat, exact: true }).click();
    await main.getByRole("heading", { name: args.heartbeat, exact: true }).waitFor();
    await main.locator(".page-head .state", { hasText: "down" }).waitFor();
    report.incidentLink = new URL(page.url()).hash;

    // A read-only key, on a phone's width: the page without its token, Copy, snippets or edits.
    const reader = await browser.newContext({ viewport: { width: 375, height: 800 } });
    const phone = await reader.newPage();
    phone.setDefaultTimeout(20_000);
    await signInWithForm(phone, args.baseUrl, args.readKey);
    await phone.goto(`${args.baseUrl}/${report.incidentLink}`);
    const readMain = phone.locator("main");
    await readMain.getByRole("heading", { name: "Ping URL" }).waitFor();
    report.readOnly = {
      url: await readMain.locator("section", { hasText: "Ping URL" }).locator("code").first()
        .innerText(),
      copyButtons: await readMain.getByRole("button", { name: /^Copy/ }).count(),
      snippets: await readMain.locator("details.snippet").count(),
      edit: await readMain.getByRole("link", { name: "Edit heartbeat" }).count(),
    };
    const path = `${args.shotDir}/heartbeat-read-only-375.png`;
    await phone.screenshot({ path, fullPage: true });
    report.screenshots.push(path);
    return report;
  });
}

if (import.meta.main) await script.reportOf(run);
