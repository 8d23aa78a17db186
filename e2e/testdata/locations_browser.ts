// Drives the dashboard's locations page and a probe's view by location in headless Chromium for
// e2e/locations_dashboard_test.ts, which runs it as a subprocess:
//
//   deno run -A e2e/testdata/locations_browser.ts '<LocationsArgs as JSON>'
//
// It asks the test (a line `{"ask": …}` on stdout, then a line on stdin) to do what only the
// test can: run the probe from the location whose token the page showed. Its last line on stdout
// is `{"report": …}`; progress goes to stderr.
import { chromium, type Page } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";
import { ask, type AxeFinding, axeScan, watch } from "./dashboard_browser.ts";
import { signInWithForm } from "./sign_in.ts";

const TIMEOUT_MS = 20_000;

export interface LocationsArgs {
  chromium: string;
  baseUrl: string;
  apiKey: string;
  readKey: string;
  /** The remote location the run adds through the page. */
  location: string;
  /** A second one, added and deleted. */
  spare: string;
  /** A project with a probe at the built-in location and `location` (made by the test). */
  project: string;
  probeId: string;
  shotDir: string;
}

export interface LocationsReport {
  /** The names in the table's rows, in order, before anything was added. */
  initialRows: string[];
  added: { token: string; rowText: string; shownAfterReload: boolean };
  /** What the token's box offers: the token copied, the start command, the systemd files. */
  setup: { focused: string; copied: string; command: string; env: string; unit: string };
  rotated: { token: string };
  deleted: { notice: string; rows: string[] };
  /** The probe's form: a location that is none refused beside the field, then saved. */
  form: { unknownError: string; focused: string | null; saved: string; projectSaved: string };
  /** After the test ran the probe from both locations. */
  health: { runners: string; checks: string; version: string };
  probe: {
    locationsFact: string;
    rows: Record<string, { outcome: string; latency: string }>;
    chartSeries: number;
    legend: string[];
    /** The chart's caption: each location's p95 range in words. */
    summary: string;
    /** The window the chart opened on, and its time axis's labels as drawn (`data-ticks`). */
    window: string;
    ticks: string;
  };
  readOnly: { rows: string[]; buttons: string[]; forms: number; tokenShown: boolean };
  axe: AxeFinding[];
  axePages: string[];
  foreign: string[];
  csp: string[];
  consoleErrors: string[];
  pageErrors: string[];
  screenshots: string[];
}

const log = (text: string) => console.error(`locations_browser: ${text}`);

const rowNames = (page: Page) =>
  page.locator("main table.locations tbody tr").evaluateAll((rows) =>
    rows.map((r) => (r as HTMLElement).dataset.location ?? "")
  );

async function run(args: LocationsArgs): Promise<LocationsReport> {
  const report: LocationsReport = {
    initialRows: [],
    added: { token: "", rowText: "", shownAfterReload: true },
    setup: { focused: "", copied: "", command: "", env: "", unit: "" },
    rotated: { token: "" },
    deleted: { notice: "", rows: [] },
    form: { unknownError: "", focused: null, saved: "", projectSaved: "" },
    health: { runners: "", checks: "", version: "" },
    probe: {
      locationsFact: "",
      rows: {},
      chartSeries: 0,
      legend: [],
      summary: "",
      window: "",
      ticks: "",
    },
    readOnly: { rows: [], buttons: [], forms: -1, tokenShown: true },
    axe: [],
    axePages: [],
    foreign: [],
    csp: [],
    consoleErrors: [],
    pageErrors: [],
    screenshots: [],
  };
  const browser = await chromium.launch({ executablePath: args.chromium, args: CHROMIUM_ARGS });
  try {
    const writer = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await writer.grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: new URL(args.baseUrl).origin,
    });
    const page = await writer.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    watch(page, new URL(args.baseUrl).origin, report, report.consoleErrors);
    const main = page.locator("main");
    const shot = async (name: string) => {
      const path = `${args.shotDir}/${name}.png`;
      await page.screenshot({ path, fullPage: true });
      report.screenshots.push(path);
    };
    const scan = async (name: string) => {
      report.axe.push(...await axeScan(page, name));
      report.axePages.push(name);
    };

    log("sign in, open Locations from the main navigation");
    await signInWithForm(page, args.baseUrl, args.apiKey);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Locations" })
      .click();
    await main.getByRole("heading", { name: "Locations", level: 1 }).waitFor();
    await main.locator("table.locations tbody tr").first().waitFor();
    report.initialRows = await rowNames(page);
    await scan("locations");

    log("add a location: its token shown once");
    await main.getByLabel("Name").fill(args.location);
    await main.getByLabel("Label (optional)").fill("Office LAN");
    await main.getByRole("button", { name: "Add location" }).click();
    const token = main.locator("#location-token");
    await token.waitFor();
    report.added.token = await token.inputValue();
    report.setup.focused = await page.evaluate(() => document.activeElement?.textContent ?? "");
    await main.getByRole("button", { name: "Copy token" }).click();
    await main.getByText("Copied.").waitFor();
    report.setup.copied = await page.evaluate(() => navigator.clipboard.readText());
    await main.getByLabel("Networks its probes may reach").fill("10.0.0.0/8, 192.168.1.0/24");
    await main.getByText("As a systemd service").click();
    report.setup.command = await main.locator("#runner-command").inputValue();
    report.setup.env = await main.locator("#runner-env").inputValue();
    report.setup.unit = await main.locator("#runner-unit").inputValue();
    await main.locator(`tr[data-location="${args.location}"]`).waitFor();
    report.added.rowText = await main.locator(`tr[data-location="${args.location}"]`).innerText();
    await scan("locations with a token shown");
    await shot("locations-token");

    log("rotate its token");
    await main.getByRole("button", { name: `Rotate token of ${args.location}` }).click();
    await main.getByRole("button", { name: "Rotate token" }).click();
    await page.waitForFunction(
      (old) =>
        (document.querySelector("#location-token") as HTMLTextAreaElement | null)?.value !== old,
      report.added.token,
    );
    report.rotated.token = await token.inputValue();
    await page.reload();
    await main.locator(`tr[data-location="${args.location}"]`).waitFor();
    report.added.shownAfterReload = await main.locator("#location-token").count() > 0;

    log("add and delete a spare location");
    await main.getByLabel("Name").fill(args.spare);
    await main.getByRole("button", { name: "Add location" }).click();
    await main.locator(`tr[data-location="${args.spare}"]`).waitFor();
    await main.getByRole("button", { name: `Delete ${args.spare}` }).click();
    await main.getByRole("button", { name: "Delete location" }).click();
    const notice = main.locator("p.notice").filter({ hasText: "was deleted" });
    await notice.waitFor();
    report.deleted.notice = await notice.innerText();
    await page.waitForFunction(
      (name) => !document.querySelector(`tr[data-location="${name}"]`),
      args.spare,
    );
    report.deleted.rows = await rowNames(page);

    log("the probe's form: where it runs");
    await page.goto(`${args.baseUrl}/#/projects/${args.project}/probes/${args.probeId}/edit`);
    // Where it runs is one of the settings a new probe needs none of: folded until opened.
    await main.locator("details.more > summary").click();
    const field = main.getByLabel("Locations (optional)");
    await field.fill(`local, mars`);
    await main.getByRole("button", { name: "Save probe" }).click();
    await main.locator("#field-locations-error").waitFor();
    report.form.unknownError = await main.locator("#field-locations-error").innerText();
    report.form.focused = await page.evaluate(() =>
      document.activeElement?.getAttribute("name") ?? null
    );
    await scan("probe form, unknown location");
    await field.fill(`local, ${args.location}`);
    await main.getByRole("button", { name: "Save probe" }).click();
    const saved = main.locator("p.notice").filter({ hasText: "The probe was" });
    await saved.waitFor();
    report.form.saved = await saved.innerText();

    log("the project's default locations");
    await page.goto(`${args.baseUrl}/#/projects/${args.project}`);
    await main.getByLabel("Default locations").fill(args.location);
    await main.getByRole("button", { name: "Save changes" }).click();
    const projectSaved = main.locator("form span[role=status]").filter({ hasText: "Saved." });
    await projectSaved.waitFor();
    report.form.projectSaved = await projectSaved.innerText();
    await scan("project with default locations");

    log("the test runs the probe from both locations");
    await ask({ token: report.rotated.token, old: report.added.token });
    await page.goto(`${args.baseUrl}/#/locations`);
    const row = main.locator(`tr[data-location="${args.location}"]`);
    await row.waitFor();
    report.health = {
      runners: await row.locator('[data-label="Runners"]').innerText(),
      checks: await row.locator('[data-label="Checks/min"]').innerText(),
      version: await row.locator('[data-label="Version"]').innerText(),
    };
    await shot("locations-health");

    log("the probe page: one line per location");
    await page.goto(`${args.baseUrl}/#/projects/${args.project}/probes/${args.probeId}`);
    await main.getByRole("heading", { name: "By location" }).waitFor();
    await main.locator("table.by-location tbody tr").nth(1).waitFor();
    report.probe.locationsFact = await main.locator("dt", { hasText: "Locations" })
      .locator("xpath=following-sibling::dd").innerText();
    for (const tr of await main.locator("table.by-location tbody tr").all()) {
      const name = await tr.getAttribute("data-location") ?? "";
      report.probe.rows[name] = {
        outcome: await tr.locator('[data-label="Latest outcome"] .state').innerText(),
        latency: await tr.locator('[data-label="Latency"]').innerText(),
      };
    }
    const chart = main.locator("section[aria-labelledby='locations-title'] .chart");
    await chart.locator("canvas").waitFor();
    report.probe.chartSeries = Number(await chart.getAttribute("data-series"));
    report.probe.legend = await chart.locator(".u-legend .u-series .u-label").allInnerTexts();
    report.probe.summary = await main.locator(
      "section[aria-labelledby='locations-title'] figcaption",
    )
      .innerText();
    report.probe.window = await main.locator('input[name="location-window"]:checked')
      .getAttribute("value") ?? "";
    report.probe.ticks = await chart.locator(".uplot").getAttribute("data-ticks") ?? "";
    await scan("probe by location");
    await shot("probe-by-location");

    log("a read-only key: the table without controls");
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const reader = await context.newPage();
    reader.setDefaultTimeout(TIMEOUT_MS);
    watch(reader, new URL(args.baseUrl).origin, report, report.consoleErrors);
    await signInWithForm(reader, args.baseUrl, args.readKey);
    // Through the main navigation, as a user goes (a `goto` of the hash right after signing in
    // raced the dashboard's own first navigation under CI's load: the page stayed on Overview).
    await reader.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Locations" })
      .click();
    await reader.locator("main").getByRole("heading", { name: "Locations", level: 1 }).waitFor();
    await reader.locator(`main tr[data-location="${args.location}"]`).waitFor();
    report.readOnly = {
      rows: await rowNames(reader),
      buttons: await reader.locator("main button").allInnerTexts(),
      forms: await reader.locator("main form").count(),
      tokenShown: await reader.locator("main #location-token").count() > 0,
    };
    report.axe.push(...await axeScan(reader, "locations, read-only"));
    report.axePages.push("locations, read-only");
    await reader.screenshot({ path: `${args.shotDir}/locations-read-only.png`, fullPage: true });
    report.screenshots.push(`${args.shotDir}/locations-read-only.png`);
    await context.close();
  } finally {
    await browser.close();
  }
  return report;
}

if (import.meta.main) {
  const report = await run(JSON.parse(Deno.args[0]));
  console.log(JSON.stringify({ report }));
  Deno.exit(0);
}
