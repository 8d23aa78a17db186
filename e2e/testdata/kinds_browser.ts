// A new user's TCP and DNS probes, set up from the dashboard in headless Chromium, for
// e2e/kinds_dashboard_test.ts, which runs it as a subprocess:
//
//   deno run -A e2e/testdata/kinds_browser.ts '<KindsArgs as JSON>'
//
// It asks the test (`{"ask": …}` on stdout) to stop the listener and the responder once both
// probes are up; its last line on stdout is `{"report": …}`.
import type { Page } from "playwright-core";
import * as script from "./browser_script.ts";
import { ask } from "./dashboard_browser.ts";
import { signInAlertingTo } from "./alerting_setup.ts";

export interface KindsArgs {
  chromium: string;
  baseUrl: string;
  apiKey: string;
  project: string;
  tcpPort: number;
  dnsPort: number;
  hookUrl: string;
  shotDir: string;
}

export interface KindsReport extends script.PageFindings {
  /** The port's refusal beside the port field, and the field focused. */
  portRefused: { message: string; focused: string | null };
  /** The form's fields once TCP, then DNS, is chosen (their labels). */
  tcpFields: string[];
  dnsFields: string[];
  tcpPage: { watches: string; facts: string; headers: string[]; ran: string; assertions: string };
  /** The TCP probe's edit form: its kind shown without a choice, its host and port filled in. */
  tcpEdit: { kind: string; host: string; port: string; radios: number };
  dnsPage: { watches: string; ran: string; assertions: string };
  overview: { name: string; state: string; tag: string }[];
  /** The TCP probe's latest result once the listener is gone. */
  tcpDown: { state: string; error: string };
}

/** The labels of the probe form's visible fields, in order. */
function fieldLabels(page: Page): Promise<string[]> {
  return page.locator("main form label").evaluateAll((labels) =>
    labels.filter((l) => (l as HTMLElement).offsetParent !== null)
      .map((l) => (l.textContent ?? "").trim().replace(/\s+/g, " "))
  );
}

function run(args: KindsArgs): Promise<KindsReport> {
  return script.inChromium(args.chromium, async (browser) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(20_000);
    const report: KindsReport = {
      portRefused: { message: "", focused: null },
      tcpFields: [],
      dnsFields: [],
      tcpPage: { watches: "", facts: "", headers: [], ran: "", assertions: "" },
      tcpEdit: { kind: "", host: "", port: "", radios: 0 },
      dnsPage: { watches: "", ran: "", assertions: "" },
      overview: [],
      tcpDown: { state: "", error: "" },
      ...script.noFindings(),
    };
    const { main, nav, shot, scan } = script.pageTools(page, args, report);

    // Where alerts go: a webhook, named by the policy, which says down after one failed run.
    await signInAlertingTo(page, { ...args, failuresBeforeDown: 1 });

    // A project, then a TCP probe: its port forgotten first, which the API refuses.
    await nav.getByRole("link", { name: "Overview" }).click();
    await main.getByRole("link", { name: "New project" }).click();
    await main.getByLabel("Name", { exact: true }).fill(args.project);
    await main.getByRole("button", { name: "Create project" }).click();
    await main.getByRole("heading", { name: args.project }).waitFor();
    const addProbe = async () => {
      await main.getByRole("link", { name: "Add probe" }).click();
      await main.getByRole("heading", { name: `New probe in ${args.project}` }).waitFor();
    };
    await addProbe();
    await main.getByRole("radio", { name: "TCP" }).check();
    report.tcpFields = await fieldLabels(page);
    await main.getByLabel("Host").fill("127.0.0.1");
    await main.getByRole("button", { name: "Create probe" }).click();
    report.portRefused = await script.refusalBeside(page, "port");
    await scan("tcp probe form refused");
    await main.getByLabel("Port", { exact: true }).fill(String(args.tcpPort));
    await main.getByLabel("Label (optional)").fill("Cache");
    await shot("probe-form-tcp");
    await main.getByRole("button", { name: "Create probe" }).click();
    await main.getByRole("heading", { name: "Cache" }).waitFor();
    const runNow = async () => {
      await main.getByRole("button", { name: "Run now" }).click();
      const status = main.getByRole("status").filter({ hasText: "Ran now" });
      await status.waitFor();
      return await status.innerText();
    };
    const facts = main.locator("dl.facts");
    report.tcpPage.ran = await runNow();
    report.tcpPage.watches = await facts.locator("div", { hasText: "Watches" }).locator("dd")
      .innerText();
    report.tcpPage.facts = await facts.innerText();
    report.tcpPage.assertions = await facts.locator("div", { hasText: "Assertions" })
      .locator("dd").innerText();
    await main.locator("section", { hasText: "Recent results" }).locator("tbody tr").first()
      .waitFor();
    report.tcpPage.headers = await main.locator("section", { hasText: "Recent results" })
      .locator("th").allInnerTexts();
    const cachePage = page.url();
    await main.getByRole("link", { name: "Edit probe" }).click();
    await main.getByRole("heading", { name: "Edit probe" }).waitFor();
    report.tcpEdit = {
      kind: await main.locator(".kind-fixed").innerText(),
      host: await main.getByLabel("Host").inputValue(),
      port: await main.getByLabel("Port", { exact: true }).inputValue(),
      radios: await main.getByRole("radio").count(),
    };
    await main.getByRole("link", { name: "Cancel" }).click();
    await main.getByRole("heading", { name: "Cache" }).waitFor();

    // A DNS probe at the local responder: one of the A records must be 192.0.2.1.
    await main.getByRole("link", { name: args.project }).first().click();
    await addProbe();
    await main.getByRole("radio", { name: "DNS" }).check();
    report.dnsFields = await fieldLabels(page);
    await main.getByLabel("Resolver").fill("127.0.0.1");
    await main.getByLabel("Port (optional)").fill(String(args.dnsPort));
    await main.getByLabel("Name to look up").fill("example.test");
    await main.getByLabel("Record type").selectOption("A");
    await main.getByLabel("A record equals").fill("192.0.2.1");
    await main.getByLabel("Label (optional)").fill("Zone");
    await scan("dns probe form");
    await shot("probe-form-dns");
    await main.getByRole("button", { name: "Create probe" }).click();
    await main.getByRole("heading", { name: "Zone" }).waitFor();
    report.dnsPage.ran = await runNow();
    report.dnsPage.watches = await facts.locator("div", { hasText: "Watches" }).locator("dd")
      .innerText();
    report.dnsPage.assertions = await facts.locator("div", { hasText: "Assertions" })
      .locator("dd").innerText();

    // Both up on the overview, each with its kind.
    await nav.getByRole("link", { name: "Overview" }).click();
    const rowOf = (name: string) =>
      main.locator("tr", { has: page.getByRole("link", { name, exact: true }) });
    for (const name of ["Cache", "Zone"]) {
      await rowOf(name).locator('td[data-label="State"] .state', { hasText: "up" }).waitFor();
      report.overview.push({
        name,
        state: await rowOf(name).locator('td[data-label="State"] .state').innerText(),
        tag: await rowOf(name).locator(".tag").innerText(),
      });
    }
    await scan("overview with tcp and dns probes");
    await shot("overview-kinds", false);
    await page.goto(cachePage);
    await main.getByRole("heading", { name: "Cache" }).waitFor();
    await main.locator("canvas").first().waitFor();
    await scan("tcp probe page");
    await shot("probe-tcp");

    // The listener and the responder stop: the test waits for their alerts.
    await ask({ stop: true });
    await page.reload();
    await main.getByRole("heading", { name: "Cache" }).waitFor();
    const latest = main.locator("section", { hasText: "Recent results" }).locator("tbody tr")
      .first();
    await latest.locator('td[data-label="Outcome"]', { hasText: "down" }).waitFor();
    report.tcpDown = {
      state: await main.locator(".page-head .state").innerText(),
      error: await latest.locator('td[data-label="Error or failed check"]').innerText(),
    };
    return report;
  });
}

if (import.meta.main) await script.reportOf(run);
