// The dashboard's escalation, flapping and dependency screens in headless Chromium, for
// e2e/oncall_dashboard_test.ts, which runs it as a subprocess:
//
//   deno run -A e2e/testdata/oncall_screens_browser.ts '<OncallArgs as JSON>'
//
// Its last line on stdout is `{"report": …}`.
import type { Page } from "playwright-core";
import { signInAlertingTo } from "./alerting_setup.ts";
import * as script from "./browser_script.ts";

export interface OncallArgs {
  chromium: string;
  baseUrl: string;
  apiKey: string;
  project: string;
  hookUrl: string;
  /** A loopback site: `/db` and `/app` answer 500, `/flaky` 500 and 200 by turns. */
  siteUrl: string;
  shotDir: string;
}

export interface OncallReport extends script.PageFindings {
  /** A step of 0 minutes refused: the words beside the field. */
  escalationRefused: string;
  /** The policy's facts once saved: its escalation and flapping in words. */
  policyFacts: { escalation: string; flapChanges: string; flapMinutes: string };
  /** The probe ids the pages' addresses name. */
  ids: { db: string; app: string; flaky: string };
  /** The app's page: what it depends on, and its incident's cause and suppression. */
  app: { dependsOn: string; incident: string };
  /** The flapping probe's page: its badges and its state's words, and the run-nows it took. */
  flaky: { badges: string[]; state: string; runs: number };
  /** The overview's badges on the flapping probe's row. */
  overviewFlaky: string[];
}

/** The probe id of the probe page shown (`#/projects/<p>/probes/<id>`). */
const probeIdOf = (page: Page) => page.url().match(/\/probes\/([0-9a-f]+)/)?.[1] ?? "";

/** Reloads the page until `shown` finds something (a probe's first run comes after its page). */
async function reloadUntil(page: Page, shown: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 30; i++) {
    if (await shown()) return;
    await page.waitForTimeout(500);
    await page.reload();
    await page.locator("main h1").waitFor();
  }
  throw new Error(`not shown: ${what}`);
}

function run(args: OncallArgs): Promise<OncallReport> {
  return script.inChromium(args.chromium, async (browser) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(20_000);
    const report: OncallReport = {
      escalationRefused: "",
      policyFacts: { escalation: "", flapChanges: "", flapMinutes: "" },
      ids: { db: "", app: "", flaky: "" },
      app: { dependsOn: "", incident: "" },
      flaky: { badges: [], state: "", runs: 0 },
      overviewFlaky: [],
      ...script.noFindings(),
    };
    const { main, nav, shot, scan } = script.pageTools(page, args, report);
    const fact = (name: string) =>
      main.locator("dl div", { has: page.locator("dt", { hasText: name }) }).first()
        .locator("dd").innerText();

    // Where alerts go, then the policy: down after one failed run, up after one good one.
    await signInAlertingTo(page, { ...args, failuresBeforeDown: 1 });
    const policy = main.getByRole("form", { name: "Change the policy" });
    await policy.getByLabel("Successes before recovered").fill("1");
    // A step at 0 minutes: refused by the service, in words beside the field.
    await policy.getByLabel("Escalation steps").fill("0=ops-hook");
    await policy.getByRole("button", { name: "Save policy" }).click();
    const stepsError = policy.locator("#policy-escalation-error, .field-error").first();
    await stepsError.waitFor();
    report.escalationRefused = await stepsError.innerText();
    await policy.getByLabel("Escalation steps").fill("1=ops-hook");
    await policy.getByLabel("Flapping past (changes)").fill("2");
    await policy.getByLabel("Flapping window (minutes)").fill("5");
    await policy.getByRole("button", { name: "Save policy" }).click();
    await policy.getByText("Saved.").waitFor();
    await main.locator("dd", { hasText: "after 1 min: ops-hook" }).waitFor();
    report.policyFacts = {
      escalation: await fact("Escalation"),
      flapChanges: await fact("Flapping past (changes)"),
      flapMinutes: await fact("Flapping window (minutes)"),
    };
    await scan("alert policy with escalation and flapping");
    await shot("policy-escalation-flapping");

    // A project with a database, an app that depends on it, and a flapping probe.
    await nav.getByRole("link", { name: "Overview" }).click();
    await main.getByRole("link", { name: "New project" }).click();
    await main.getByLabel("Name", { exact: true }).fill(args.project);
    await main.getByRole("button", { name: "Create project" }).click();
    await main.getByRole("heading", { name: args.project }).waitFor();
    const addProbe = async (path: string, label: string, dependsOn?: string) => {
      await page.goto(`${args.baseUrl}/#/projects/${args.project}`);
      await main.getByRole("heading", { name: args.project }).waitFor();
      await main.getByRole("link", { name: "Add probe" }).click();
      await main.getByRole("heading", { name: `New probe in ${args.project}` }).waitFor();
      await main.getByLabel("URL", { exact: true }).fill(`${args.siteUrl}${path}`);
      await main.getByLabel("Label (optional)").fill(label);
      if (dependsOn) {
        await main.locator("details.more summary").click();
        await main.getByLabel("Depends on (optional)").fill(dependsOn);
        await scan("probe form with a dependency");
      }
      await main.getByRole("button", { name: "Create probe" }).click();
      await main.getByRole("heading", { name: label }).waitFor();
      return probeIdOf(page);
    };
    report.ids.db = await addProbe("/db", "Database");
    // Down before the app is made: the app's incident opens while its dependency is down.
    const state = main.locator(".page-head .state").first();
    await reloadUntil(page, async () => await state.innerText() === "down", "the database down");
    report.ids.app = await addProbe("/app", "App", report.ids.db);
    report.app.dependsOn = await fact("Depends on");
    const incidents = main.locator('section[aria-labelledby="incidents-title"]');
    await reloadUntil(
      page,
      async () => await incidents.locator("tbody tr").count() > 0,
      "App's incident",
    );
    report.app.incident = await incidents.locator('td[data-label="Cause"]').first().innerText();
    await scan("probe page with a suppressed incident");
    await shot("probe-suppressed");

    report.ids.flaky = await addProbe("/flaky", "Flaky");
    const badges = main.locator(".page-head .state");
    while (!(await badges.allInnerTexts()).includes("flapping") && report.flaky.runs < 8) {
      report.flaky.runs++;
      await main.getByRole("button", { name: "Run now" }).click();
      await main.getByRole("status").filter({ hasText: "Ran now" }).waitFor();
      await page.reload();
      await main.getByRole("heading", { name: "Flaky" }).waitFor();
    }
    report.flaky.badges = await badges.allInnerTexts();
    report.flaky.state = await fact("State");
    await scan("flapping probe page");
    await shot("probe-flapping");
    await nav.getByRole("link", { name: "Overview" }).click();
    const row = main.locator("tr", { has: page.getByRole("link", { name: "Flaky", exact: true }) });
    await row.waitFor();
    report.overviewFlaky = await row.locator(".state").allInnerTexts();
    return report;
  });
}

if (import.meta.main) await script.reportOf(run);
