// Drives the dashboard's settings screens and its incidents page in headless Chromium for
// e2e/dashboard_settings_test.ts, which runs it as a subprocess (playwright-core needs
// --allow-all):
//
//   deno run -A e2e/testdata/dashboard_settings_browser.ts '<Args as JSON>'
//
// It starts a local target of its own (server/testing/target_server.ts: a webhook receiver, a
// Slack URL that answers 404, and a `/health` it switches between 503 and 200), makes the
// projects and probes it needs through the REST API, then does through the browser alone what a
// user would: targets, the policy, a project's overrides, maintenance, the status page, badges,
// incidents. Its last line on stdout is `{"report": …}`; progress goes to stderr.
import { type Browser, chromium, type Page } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";
import { signInContext, signInWithForm } from "./sign_in.ts";
import { startTarget } from "../../server/testing/target_server.ts";

const TIMEOUT_MS = 20_000;

export interface Args {
  chromium: string;
  baseUrl: string;
  apiKey: string;
  readKey: string;
  /** The project the screens are tried on, made by the script; `ops` is a second one. */
  project: string;
  other: string;
  shotDir: string;
}

export interface AxeFinding {
  page: string;
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

export interface Report {
  targets: {
    generatedKey: string;
    copiedKey: string;
    listedKey: string;
    webhookTest: string;
    /** What has focus once the test send is over (the button, not the page). */
    focusAfterTest: string;
    slackUrlShown: string;
    slackTest: string;
    discordTest: string;
    badUrlError: string;
    badUrlFocused: string | null;
    edited: string;
    inUse: string;
    deleted: string[];
    mailRecipients: string;
    keyFieldType: string;
    keyFieldEmpty: boolean;
    keyAfterEdit: string;
  };
  policy: { saved: string; shown: string; focusAfterSave: string };
  overrides: { saved: string; effective: string };
  maintenance: {
    upcoming: string[];
    past: string[];
    endsError: string;
    /** The start the form offered, and how many minutes ahead of the browser's clock. */
    offeredStart: string;
    offeredLeadMinutes: number;
    afterDelete: string[];
    /** What has focus once the deleted window's row is gone. */
    focusAfterDelete: string;
  };
  statusPage: {
    heading: string;
    pageLink: string;
    pageTitle: string;
    jsonTitle: string;
    projectLink: string;
    probesListed: string[];
    /** The JSON's probes once the page is set to show Checkout only. */
    chosenProbes: string[];
  };
  badges: {
    markdown: string;
    copied: string;
    previewWidth: number;
    html: string;
    rotatedMarkdown: string;
    /** The snippet the list's Snippet shows later, without rotating. */
    snippetAgain: string;
    oldTokenStatus: number;
    newTokenStatus: number;
    afterDelete: string;
    focusAfterDelete: string;
  };
  /** The Settings page: the I'm alive settings read, changed and refused; the service's facts. */
  settings: {
    shown: string;
    service: string;
    saved: string;
    savedShown: string;
    refused: string;
    refusedFocused: string;
    channelsRefused: string;
    afterRefusal: string;
  };
  incidents: {
    /** The page's first view with no incident open and one resolved. */
    nothingOpen: { openHeading: string; resolvedHeading: string; rows: string[] };
    openHeading: string;
    openRows: number;
    filteredRows: string[];
    acknowledged: string;
    /** What has focus once Acknowledge has given way to the new state. */
    focusAfterAcknowledge: string;
    resolvedHeading: string;
    page1: number;
    page2: number;
    pagerAfterNext: string;
    /** The ids of the rows on pages 1 and 2 of the resolved ones. */
    ids: string[][];
    /** The heading of the page a project's Incidents link opens. */
    fromProject: string;
    /** The page reloaded after a filter was chosen: its heading and its address. */
    afterReload: { heading: string; hash: string };
  };
  readOnly: {
    tag: string;
    pages: string[];
    writeControls: Record<string, string[]>;
    hookUrl: string;
  };
  narrow: Record<string, number>;
  /** Tab presses each keyboard step took. */
  keyboard: Record<string, number>;
  axe: AxeFinding[];
  axePages: string[];
  csp: string[];
  foreign: string[];
  pageErrors: string[];
  consoleErrors: string[];
  screenshots: string[];
}

const log = (text: string) => console.error(`dashboard_settings_browser: ${text}`);

/** axe-core's browser build, read from the package the dev import map pins. */
const axeSource = Deno.readTextFileSync(new URL(import.meta.resolve("axe-core/axe.min.js")));

/** Runs axe on the page as it is and answers every finding, whatever its impact. */
async function axeScan(page: Page, name: string): Promise<AxeFinding[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) {
    await page.evaluate(axeSource);
  }
  const found = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const axe = (globalThis as any).axe;
    const results = await axe.run(document, { resultTypes: ["violations"] });
    // deno-lint-ignore no-explicit-any
    return results.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact ?? "",
      help: v.help,
      // deno-lint-ignore no-explicit-any
      targets: v.nodes.map((n: any) => String(n.target)).slice(0, 5),
    }));
  });
  log(`axe on ${name}: ${found.length} findings`);
  return found.map((f: Omit<AxeFinding, "page">) => ({ page: name, ...f }));
}

/** What the focused element is called: its label, or its text. */
function focusedName(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return "";
    const labelled = el.getAttribute("aria-label");
    if (labelled) return labelled;
    const id = el.getAttribute("id");
    const label = id ? document.querySelector(`label[for="${id}"]`) : null;
    return (label?.textContent ?? el.textContent ?? "").trim().replace(/\s+/g, " ");
  });
}

/** Presses Tab until the focused element is `name`; answers the presses. Throws after 60. */
async function tabTo(page: Page, name: string): Promise<number> {
  for (let presses = 1; presses <= 60; presses++) {
    await page.keyboard.press("Tab");
    if ((await focusedName(page)) === name) return presses;
  }
  throw new Error(`${name} was not reached with 60 presses of Tab`);
}

/** Controls that change something, by role and accessible name. */
const WRITE_CONTROLS: [role: "link" | "button", name: string | RegExp][] = [
  ["button", "Add target"],
  ["button", /^Send test/],
  ["button", /^Edit/],
  ["button", /^Delete/],
  ["button", "Save policy"],
  ["button", "Save overrides"],
  ["button", "Add window"],
  ["button", "Save status page"],
  ["button", "Make badge"],
  ["button", /^Rotate/],
  ["button", /^Acknowledge/],
  ["button", "Save settings"],
];

/** A small REST client with the write key, for what the script sets up outside the browser. */
function rest(baseUrl: string, key: string) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { "x-service-api-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

async function run(args: Args): Promise<Report> {
  const report: Report = {
    targets: {
      generatedKey: "",
      copiedKey: "",
      listedKey: "",
      webhookTest: "",
      focusAfterTest: "",
      slackUrlShown: "",
      slackTest: "",
      discordTest: "",
      badUrlError: "",
      badUrlFocused: null,
      edited: "",
      inUse: "",
      deleted: [],
      mailRecipients: "",
      keyFieldType: "",
      keyFieldEmpty: false,
      keyAfterEdit: "",
    },
    policy: { saved: "", shown: "", focusAfterSave: "" },
    overrides: { saved: "", effective: "" },
    maintenance: {
      upcoming: [],
      past: [],
      endsError: "",
      offeredStart: "",
      offeredLeadMinutes: 0,
      afterDelete: [],
      focusAfterDelete: "",
    },
    statusPage: {
      heading: "",
      pageLink: "",
      pageTitle: "",
      jsonTitle: "",
      projectLink: "",
      probesListed: [],
      chosenProbes: [],
    },
    badges: {
      markdown: "",
      copied: "",
      previewWidth: 0,
      html: "",
      rotatedMarkdown: "",
      snippetAgain: "",
      oldTokenStatus: 0,
      newTokenStatus: 0,
      afterDelete: "",
      focusAfterDelete: "",
    },
    settings: {
      shown: "",
      service: "",
      saved: "",
      savedShown: "",
      refused: "",
      refusedFocused: "",
      channelsRefused: "",
      afterRefusal: "",
    },
    incidents: {
      nothingOpen: { openHeading: "", resolvedHeading: "", rows: [] },
      openHeading: "",
      openRows: 0,
      filteredRows: [],
      acknowledged: "",
      focusAfterAcknowledge: "",
      resolvedHeading: "",
      page1: 0,
      page2: 0,
      pagerAfterNext: "",
      ids: [],
      fromProject: "",
      afterReload: { heading: "", hash: "" },
    },
    readOnly: { tag: "", pages: [], writeControls: {}, hookUrl: "" },
    narrow: {},
    keyboard: {},
    axe: [],
    axePages: [],
    csp: [],
    foreign: [],
    pageErrors: [],
    consoleErrors: [],
    screenshots: [],
  };
  const target = await startTarget();
  const api = rest(args.baseUrl, args.apiKey);
  const origin = new URL(args.baseUrl).origin;
  const browser = await chromium.launch({ executablePath: args.chromium, args: CHROMIUM_ARGS });
  try {
    // Set up outside the browser what the screens are about: two projects and their probes.
    target.setHealth(200, { status: "UP" });
    await api("POST", "/projects", { project: args.project, label: "Web shop" });
    const checkout = (await api("POST", `/projects/${args.project}/probes`, {
      url: `${target.origin}/health`,
      label: "Checkout",
    })).data.probe_id;
    await api("POST", `/projects/${args.project}/probes`, { url: `${target.origin}/ok` });
    await api("POST", "/projects", { project: args.other });
    const opsProbe = (await api("POST", `/projects/${args.other}/probes`, {
      url: `${target.origin}/status/503`,
      label: "Ops API",
    })).data.probe_id;

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    watch(page, origin, report);
    const main = page.locator("main");
    const nav = page.getByRole("navigation", { name: "Main" });
    const subnav = main.getByRole("navigation", { name: `Project ${args.project}` });
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

    /** Light, dark and 375 px: a screenshot each, axe on each, the width at 375 px. */
    const views = async (name: string) => {
      for (
        const [suffix, scheme, width] of [
          ["", "light", 1280],
          ["-dark", "dark", 1280],
          ["-375", "light", 375],
        ] as const
      ) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.setViewportSize({ width, height: width === 375 ? 812 : 900 });
        if (width === 375) {
          report.narrow[name] = await page.evaluate(() => document.documentElement.scrollWidth);
        }
        report.axe.push(...await axeScan(page, `${name}${suffix}`));
        report.axePages.push(`${name}${suffix}`);
        const path = `${args.shotDir}/${name}${suffix}.png`;
        await page.screenshot({ path, fullPage: true });
        report.screenshots.push(path);
      }
      await page.emulateMedia({ colorScheme: "light" });
      await page.setViewportSize({ width: 1280, height: 900 });
    };

    log("sign in");
    await signInWithForm(page, args.baseUrl, args.apiKey);

    // ---- Notification targets.
    log("targets");
    await nav.getByRole("link", { name: "Notification targets" }).click();
    await main.getByRole("heading", { name: "Notification targets" }).waitFor();
    await main.getByRole("heading", { name: "Targets (1)" }).waitFor();
    const newTarget = main.getByRole("form", { name: "Add a target" });
    // A webhook without a key: the service makes one and it is shown this once.
    await newTarget.getByLabel("Name").fill("ops-hook");
    await newTarget.getByLabel("URL", { exact: true }).fill(`${target.origin}/hooks/ops`);
    await newTarget.getByRole("button", { name: "Add target" }).click();
    await main.getByRole("heading", { name: "Targets (2)" }).waitFor();
    report.targets.generatedKey = await main.getByLabel("signing key", { exact: true })
      .inputValue();
    await main.getByRole("button", { name: "Copy signing key" }).click();
    await main.getByText("Copied.").waitFor();
    report.targets.copiedKey = await clipboard();
    const hookCard = main.getByRole("listitem", { name: "ops-hook" });
    report.targets.listedKey = await hookCard.locator("dd code").last().innerText();
    await hookCard.getByRole("button", { name: "Send test to ops-hook" }).click();
    await hookCard.getByText(/^Test /).waitFor();
    report.targets.webhookTest = await hookCard.getByText(/^Test /).innerText();
    report.targets.focusAfterTest = await focusedName(page);

    // A Slack target whose URL answers 404: created, shown by its host, its test fails.
    await newTarget.getByLabel("Slack").check();
    await newTarget.getByLabel("Name").fill("team-slack");
    await newTarget.getByLabel("URL", { exact: true }).fill("not a url");
    await newTarget.getByRole("button", { name: "Add target" }).click();
    const urlError = newTarget.locator("#new-target-url-error");
    await urlError.waitFor();
    report.targets.badUrlError = await urlError.innerText();
    report.targets.badUrlFocused = await page.evaluate(() =>
      document.activeElement?.getAttribute("id") ?? null
    );
    await newTarget.getByLabel("URL", { exact: true }).fill(`${target.origin}/status/404`);
    await newTarget.getByRole("button", { name: "Add target" }).click();
    await main.getByRole("heading", { name: "Targets (3)" }).waitFor();
    const slackCard = main.getByRole("listitem", { name: "team-slack" });
    report.targets.slackUrlShown = await slackCard.locator("dd code").first().innerText();
    await slackCard.getByRole("button", { name: "Send test to team-slack" }).click();
    await slackCard.getByText(/^Test /).waitFor();
    report.targets.slackTest = await slackCard.getByText(/^Test /).innerText();

    // A Discord target: its test delivered (the local target answers 200 to any path).
    await newTarget.getByLabel("Discord").check();
    await newTarget.getByLabel("Name").fill("team-discord");
    await newTarget.getByLabel("URL", { exact: true }).fill(`${target.origin}/discord/hook`);
    await newTarget.getByRole("button", { name: "Add target" }).click();
    await main.getByRole("heading", { name: "Targets (4)" }).waitFor();
    const discordCard = main.getByRole("listitem", { name: "team-discord" });
    await discordCard.getByRole("button", { name: "Send test to team-discord" }).click();
    await discordCard.getByText(/^Test /).waitFor();
    report.targets.discordTest = await discordCard.getByText(/^Test /).innerText();

    // A mail target, then its recipients edited.
    await newTarget.getByLabel("Mail").check();
    await newTarget.getByLabel("Name").fill("oncall");
    await newTarget.getByLabel("Recipients").fill("oncall@example.com");
    await newTarget.getByRole("button", { name: "Add target" }).click();
    await main.getByRole("heading", { name: "Targets (5)" }).waitFor();
    const mailCard = main.getByRole("listitem", { name: "oncall" });
    await mailCard.getByRole("button", { name: "Edit oncall" }).click();
    await mailCard.getByLabel("Recipients").fill("oncall@example.com\nops@example.com");
    await mailCard.getByRole("button", { name: "Save oncall" }).click();
    await main.getByText("Target oncall was saved.").waitFor();
    report.targets.edited = await main.locator("p.notice").innerText();
    // The list is read again after the save: the new recipients show when it is back.
    const recipients = mailCard.locator("dd").first();
    await recipients.getByText(/ops@example\.com/).waitFor().catch(() => {});
    report.targets.mailRecipients = await recipients.innerText();
    // The webhook's key replaced: entered once, in a password field, then masked again.
    await hookCard.getByRole("button", { name: "Edit ops-hook" }).click();
    const keyField = hookCard.getByLabel("Signing key (whsec_…)");
    report.targets.keyFieldType = await keyField.getAttribute("type") ?? "";
    report.targets.keyFieldEmpty = (await keyField.inputValue()) === "";
    await keyField.fill(`whsec_${btoa(String.fromCharCode(...new Uint8Array(32).fill(7)))}`);
    await hookCard.getByRole("button", { name: "Save ops-hook" }).click();
    await main.getByText("Target ops-hook was saved.").waitFor();
    report.targets.keyAfterEdit = await hookCard.locator("dd code").last().innerText();
    await views("targets");

    // ---- The alert policy: the webhook added, thresholds of 1.
    log("policy");
    await nav.getByRole("link", { name: "Alert policy" }).click();
    await main.getByRole("heading", { name: "Alert policy" }).waitFor();
    const policyForm = main.getByRole("form", { name: "Change the policy" });
    await policyForm.getByRole("checkbox", { name: "ops-hook" }).check();
    await policyForm.getByLabel("Failures before down").fill("1");
    await policyForm.getByLabel("Successes before recovered").fill("1");
    await policyForm.getByLabel("Notify when a probe is degraded").check();
    await policyForm.getByRole("button", { name: "Save policy" }).click();
    await policyForm.getByText("Saved.").waitFor();
    report.policy.focusAfterSave = await focusedName(page);
    report.policy.saved = JSON.stringify((await api("GET", "/settings/alerts")).data);
    const inEffect = main.getByLabel("The alert policy in effect");
    await inEffect.getByText("log, ops-hook").waitFor().catch(() => {});
    report.policy.shown = await inEffect.innerText();
    await views("alert-policy");

    // The webhook is in use now: its delete is refused, saying why; the Slack one goes.
    await nav.getByRole("link", { name: "Notification targets" }).click();
    await main.getByRole("heading", { name: "Targets (5)" }).waitFor();
    const hookAgain = main.getByRole("listitem", { name: "ops-hook" });
    await hookAgain.getByRole("button", { name: "Delete" }).click();
    await hookAgain.getByRole("button", { name: "Delete ops-hook" }).click();
    await hookAgain.getByRole("alert").waitFor();
    report.targets.inUse = await hookAgain.getByRole("alert").innerText();
    const slackAgain = main.getByRole("listitem", { name: "team-slack" });
    await slackAgain.getByRole("button", { name: "Delete" }).click();
    await slackAgain.getByRole("button", { name: "Delete team-slack" }).click();
    await main.getByRole("heading", { name: "Targets (4)" }).waitFor();
    report.targets.deleted = (await api("GET", "/notification-targets")).data
      .map((t: { name: string }) => t.name);

    // ---- A project's alert overrides.
    log("project overrides");
    await page.goto(`${args.baseUrl}/#/projects/${args.project}`);
    await main.getByRole("heading", { name: "Web shop" }).waitFor();
    await subnav.getByRole("link", { name: "Alerts" }).click();
    await main.getByRole("heading", { name: "Alerts", exact: true }).waitFor();
    const overrides = main.getByRole("form", { name: "Overrides" });
    await overrides.getByLabel("Reminder every (minutes)").fill("30");
    await overrides.getByLabel("Notify when a probe is degraded").selectOption("off");
    await overrides.getByRole("button", { name: "Save overrides" }).click();
    await overrides.getByText("Saved.").waitFor();
    report.overrides.saved = JSON.stringify(
      (await api("GET", `/projects/${args.project}/alerts`)).data.overrides,
    );
    const effective = main.getByLabel(`The alert policy in effect for ${args.project}`);
    // Read again after the save: the new values show when the answer is back (another "30",
    // the flapping window's, is there before it).
    const shown = Date.now() + TIMEOUT_MS;
    report.overrides.effective = await effective.innerText();
    while (
      !/Reminder every \(minutes\)\s+30/.test(report.overrides.effective) && Date.now() < shown
    ) {
      await page.waitForTimeout(50);
      report.overrides.effective = await effective.innerText();
    }
    await views("project-alerts");

    // ---- Maintenance windows: one upcoming (the form's default times), one past, one refused.
    log("maintenance");
    await subnav.getByRole("link", { name: "Maintenance" }).click();
    await main.getByRole("heading", { name: "Maintenance", exact: true }).waitFor();
    const windowForm = main.getByRole("form", { name: "Add a window" });
    report.maintenance.offeredStart = await windowForm.getByLabel("Starts (UTC)").inputValue();
    report.maintenance.offeredLeadMinutes =
      (Date.parse(`${report.maintenance.offeredStart.replace(" ", "T")}:00Z`) -
        await page.evaluate(() => Date.now())) / 60_000;
    // With the keyboard alone: to the reason (the times are filled in), then Add window.
    report.keyboard.reason = await tabTo(page, "Reason (optional)");
    await page.keyboard.type("Database upgrade");
    report.keyboard.addWindow = await tabTo(page, "Add window");
    await page.keyboard.press("Enter");
    await main.getByRole("heading", { name: "Upcoming (1)" }).waitFor();
    await windowForm.getByLabel("Starts (UTC)").fill("2026-01-10 08:00");
    await windowForm.getByLabel("Ends (UTC)").fill("2026-01-10 07:00");
    await windowForm.getByRole("button", { name: "Add window" }).click();
    await windowForm.locator("#window-ends_at-error").waitFor();
    report.maintenance.endsError = await windowForm.locator("#window-ends_at-error").innerText();
    await windowForm.getByLabel("Ends (UTC)").fill("2026-01-10 09:30");
    await windowForm.getByLabel("Reason (optional)").fill("Network move");
    await windowForm.getByRole("button", { name: "Add window" }).click();
    await main.getByRole("heading", { name: "Past (1)" }).waitFor();
    const rows = (title: string) =>
      main.getByRole("table", { name: `${title} maintenance windows` }).locator("tbody tr")
        .allInnerTexts();
    report.maintenance.upcoming = await rows("Upcoming");
    report.maintenance.past = await rows("Past");
    await views("maintenance");
    const pastTable = main.getByRole("table", { name: "Past maintenance windows" });
    await pastTable.getByRole("button", { name: "Delete" }).click();
    await pastTable.getByRole("button", { name: "Delete window" }).click();
    await main.getByRole("heading", { name: "Past (0)" }).waitFor();
    report.maintenance.focusAfterDelete = await focusedName(page);
    report.maintenance.afterDelete = (await api("GET", `/projects/${args.project}/maintenance`))
      .data.map((w: { reason: string }) => w.reason);

    // ---- The status page: made public with a title; its page, its JSON, the project's link.
    log("status page");
    await subnav.getByRole("link", { name: "Status page" }).click();
    await main.getByRole("heading", { name: "Status page", exact: true }).waitFor();
    await main.getByRole("heading", { name: "Private" }).waitFor();
    report.statusPage.probesListed = await main.locator("section ul.links-list").last()
      .locator("li").allInnerTexts();
    const pageForm = main.getByRole("form", { name: "Settings" });
    await pageForm.getByLabel("Public").check();
    await pageForm.getByLabel("Title").fill("Shop status");
    await pageForm.getByLabel("Description").fill("The web shop and its API.");
    await pageForm.getByRole("button", { name: "Save status page" }).click();
    await main.getByRole("heading", { name: "Public" }).waitFor();
    report.statusPage.heading = await main.locator("section h2").first().innerText();
    report.statusPage.pageLink = await main.getByRole("link", { name: /\/status\/[^/]+$/ })
      .getAttribute("href") ?? "";
    await views("status-page");
    const publicPage = await context.newPage();
    await publicPage.goto(`${args.baseUrl}${report.statusPage.pageLink}`);
    report.statusPage.pageTitle = await publicPage.locator("h1").innerText();
    const jsonHref = await main.getByRole("link", { name: /status\.json$/ }).getAttribute("href");
    const json = await (await fetch(`${args.baseUrl}${jsonHref}`)).json();
    report.statusPage.jsonTitle = json.title;
    await publicPage.close();
    // Only Checkout on the page: "every probe" off, the other probe unticked.
    await pageForm.getByLabel("Every probe of the project").uncheck();
    await pageForm.getByLabel(`${target.origin}/ok`).uncheck();
    await pageForm.getByRole("button", { name: "Save status page" }).click();
    await pageForm.getByText("Saved.").waitFor();
    await main.getByText("the one chosen probe").waitFor();
    const chosen = await (await fetch(`${args.baseUrl}${jsonHref}`)).json();
    report.statusPage.chosenProbes = chosen.probes.map((p: { name: string }) => p.name);
    await subnav.getByRole("link", { name: "Probes" }).click();
    await main.getByRole("heading", { name: "Web shop" }).waitFor();
    const projectLink = main.getByText("Public status page:");
    await projectLink.waitFor();
    report.statusPage.projectLink = await projectLink.innerText();
    await views("project");

    // ---- Badges: one for the Checkout probe, copied, rotated, deleted.
    log("badges");
    await subnav.getByRole("link", { name: "Badges" }).click();
    await main.getByRole("heading", { name: "Badges (0)" }).waitFor();
    const badgeForm = main.getByRole("form", { name: "Make a badge" });
    await badgeForm.getByLabel("For").selectOption(checkout);
    await badgeForm.getByRole("button", { name: "Make badge" }).click();
    await main.getByRole("heading", { name: "Badges (1)" }).waitFor();
    report.badges.markdown = await main.getByLabel("Markdown", { exact: true }).inputValue();
    report.badges.html = await main.getByLabel("HTML", { exact: true }).inputValue();
    await main.getByRole("button", { name: "Copy Markdown" }).click();
    await main.getByText("Copied.").waitFor();
    report.badges.copied = await clipboard();
    await page.waitForFunction(() =>
      (document.querySelector(".badge-preview") as HTMLImageElement | null)?.complete
    );
    report.badges.previewWidth = await main.locator(".badge-preview").evaluate((img) =>
      (img as HTMLImageElement).naturalWidth
    );
    await views("badges");
    const oldSrc = report.badges.markdown.match(/\((http[^)]+status\.svg)\)/)?.[1] ?? "";
    const badgeRow = main.getByRole("table", { name: `Badges of ${args.project}` })
      .locator("tbody tr").first();
    // The list's reload after Rotate is held until Snippet has been read: Snippet shows the new
    // token even when it is clicked before the reload answers.
    const listUrl = `${args.baseUrl}/api/v1/projects/${args.project}/badges`;
    const { promise: listHeld, resolve: releaseList } = Promise.withResolvers<void>();
    await page.route(listUrl, async (route) => {
      if (route.request().method() === "GET") await listHeld;
      await route.continue();
    });
    await badgeRow.getByRole("button", { name: "Rotate" }).click();
    await badgeRow.getByRole("button", { name: /^Rotate badge/ }).click();
    await main.getByText(/was rotated/).waitFor();
    report.badges.rotatedMarkdown = await main.getByLabel("Markdown", { exact: true })
      .inputValue();
    const newSrc = report.badges.rotatedMarkdown.match(/\((http[^)]+status\.svg)\)/)?.[1] ?? "";
    report.badges.oldTokenStatus = (await fetch(oldSrc).then(async (r) => {
      await r.body?.cancel();
      return r;
    })).status;
    report.badges.newTokenStatus = (await fetch(newSrc).then(async (r) => {
      await r.body?.cancel();
      return r;
    })).status;
    // Later, the list shows the same snippet again, without rotating.
    await main.getByRole("button", { name: "Done" }).click();
    await badgeRow.getByRole("button", { name: /^Snippet of badge/ }).click();
    report.badges.snippetAgain = await main.getByLabel("Markdown", { exact: true }).inputValue();
    releaseList();
    await badgeRow.getByRole("button", { name: "Delete" }).click();
    await badgeRow.getByRole("button", { name: /^Delete badge/ }).click();
    await main.getByRole("heading", { name: "Badges (0)" }).waitFor();
    report.badges.afterDelete = await main.locator("p.notice").innerText();
    report.badges.focusAfterDelete = await focusedName(page);

    // ---- Settings: the I'm alive settings through the form, and what the service says.
    log("settings");
    await nav.getByRole("link", { name: "Settings" }).click();
    await main.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
    const iamAliveFacts = main.getByRole("definition").first();
    await iamAliveFacts.waitFor();
    report.settings.shown = await main.locator('dl[aria-label="I\'m alive settings in effect"]')
      .innerText();
    const serviceFacts = main.locator('dl[aria-label="This service"]');
    await serviceFacts.getByText(/checks\/min/).first().waitFor();
    report.settings.service = await serviceFacts.innerText();
    await main.getByLabel("Send reports").check();
    await main.getByLabel("Interval (hours)").fill("6");
    await main.getByLabel(/^Webhook/).check();
    await main.getByRole("button", { name: "Save settings" }).click();
    await main.getByText("Saved.", { exact: true }).waitFor();
    report.settings.saved = JSON.stringify((await api("GET", "/settings/iam-alive")).data);
    await main.getByText(/^6 hours$/).waitFor();
    report.settings.savedShown = await main.locator(
      'dl[aria-label="I\'m alive settings in effect"]',
    )
      .innerText();
    // Past the spec's rules: the API's refusal in the form's words, beside its field.
    await main.getByLabel("Interval (hours)").fill("25");
    await main.getByRole("button", { name: "Save settings" }).click();
    await main.locator("#iam-alive-interval_hours-error").waitFor();
    report.settings.refused = await main.locator("#iam-alive-interval_hours-error").innerText();
    report.settings.refusedFocused = await focusedName(page);
    await main.getByLabel("Interval (hours)").fill("6");
    await main.getByLabel(/^Log/).uncheck();
    await main.getByLabel(/^Webhook/).uncheck();
    await main.getByRole("button", { name: "Save settings" }).click();
    await main.locator("#iam-alive-channels-error").waitFor();
    report.settings.channelsRefused = await main.locator("#iam-alive-channels-error").innerText();
    report.settings.afterRefusal = JSON.stringify((await api("GET", "/settings/iam-alive")).data);
    await views("settings");

    // ---- Incidents: the checkout probe down and up (resolved, none open), then the ops probe
    // down (open), the checkout probe down and up 25 times more.
    log("incidents");
    target.setHealth(503, { status: "DOWN" });
    await api("POST", `/projects/${args.project}/probes/${checkout}/run`);
    target.setHealth(200, { status: "UP" });
    await api("POST", `/projects/${args.project}/probes/${checkout}/run`);
    await nav.getByRole("link", { name: "Incidents" }).click();
    await main.getByRole("heading", { name: "No open incidents" }).waitFor();
    await main.getByText(/^Page 1: 1 resolved incident$/).waitFor();
    report.incidents.nothingOpen = {
      openHeading: await main.locator("#incident-open-title").innerText(),
      resolvedHeading: await main.locator("#incident-list-title").innerText(),
      rows: await main.locator("table.incidents-all tbody tr").allInnerTexts(),
    };
    await nav.getByRole("link", { name: "Overview" }).click();
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    await api("POST", `/projects/${args.other}/probes/${opsProbe}/run`);
    for (let i = 1; i < 26; i++) {
      target.setHealth(503, { status: "DOWN" });
      await api("POST", `/projects/${args.project}/probes/${checkout}/run`);
      target.setHealth(200, { status: "UP" });
      await api("POST", `/projects/${args.project}/probes/${checkout}/run`);
    }
    target.setHealth(503, { status: "DOWN" });
    await api("POST", `/projects/${args.project}/probes/${checkout}/run`);
    await nav.getByRole("link", { name: "Incidents" }).click();
    await main.getByRole("heading", { name: "Incidents", exact: true }).waitFor();
    const listHeading = main.locator("#incident-list-title");
    await listHeading.waitFor();
    report.incidents.openHeading = await main.locator("#incident-open-title").innerText();
    const incidentRows = main.locator("table.incidents-all tbody tr");
    report.incidents.openRows = await main
      .locator('section[aria-labelledby="incident-open-title"] tbody tr').count();
    await main.getByLabel("Project").selectOption(args.other);
    await main.getByText(`open incident in ${args.other}`).waitFor();
    report.incidents.filteredRows = await incidentRows.allInnerTexts();
    await incidentRows.first().getByRole("button", { name: /^Acknowledge/ }).click();
    await incidentRows.first().getByText("Acknowledged").waitFor();
    report.incidents.acknowledged = await incidentRows.first().innerText();
    report.incidents.focusAfterAcknowledge = await focusedName(page);
    await main.getByLabel("Project").selectOption("");
    await main.getByRole("radio", { name: "Resolved" }).check();
    await main.getByText(/^Page 1: 25 resolved incidents$/).waitFor();
    report.incidents.resolvedHeading = await listHeading.innerText();
    report.incidents.page1 = await incidentRows.count();
    const ids = () =>
      incidentRows.evaluateAll((rows) =>
        rows.map((r) => (r as HTMLElement).dataset.incident ?? "")
      );
    report.incidents.ids.push(await ids());
    await main.getByRole("button", { name: "Next page" }).click();
    await main.getByText(/^Page 2: /).waitFor();
    report.incidents.page2 = await incidentRows.count();
    report.incidents.pagerAfterNext = await main.locator(".pager").innerText();
    report.incidents.ids.push(await ids());
    await main.getByRole("button", { name: "Previous page" }).click();
    await main.getByText(/^Page 1: /).waitFor();
    await views("incidents");

    // A project's incidents from its pages: the filters in the address, kept on a reload.
    await page.goto(`${args.baseUrl}/#/projects/${args.project}`);
    await subnav.getByRole("link", { name: "Incidents" }).click();
    await main.getByText(new RegExp(`^Page 1: \\d+ resolved incidents in ${args.project}$`))
      .waitFor();
    report.incidents.fromProject = await listHeading.innerText();
    await main.getByRole("radio", { name: "Resolved" }).check();
    await main.getByText(/^Page 1: \d+ resolved incidents in /).waitFor();
    await page.reload();
    await main.getByText(/^Page 1: \d+ resolved incidents in /).waitFor();
    report.incidents.afterReload = {
      heading: await listHeading.innerText(),
      hash: decodeURIComponent(new URL(page.url()).hash),
    };

    log("a read-only key");
    report.readOnly = await readOnlyTab(browser, args, report);
  } finally {
    await browser.close();
    await target.close();
  }
  return report;
}

function watch(page: Page, origin: string, report: Report) {
  page.on("request", (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) report.foreign.push(r.url());
  });
  page.on("pageerror", (e) => report.pageErrors.push(e.message));
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    const text = m.text();
    if (/Content.Security.Policy/i.test(text)) report.csp.push(text);
    // The API's refusals the run provokes (the first visit's read before signing in, the bad
    // URL, the end before the start, the target in use) are logged by Chromium.
    else if (
      !/Failed to load resource: the server responded with a status of (401|409|422)/.test(text)
    ) {
      report.consoleErrors.push(text);
    }
  });
}

/**
 * Signs in with the read-only key in a tab of its own and visits each new screen: what it shows,
 * and the controls that would change something (none expected).
 */
async function readOnlyTab(
  browser: Browser,
  args: Args,
  report: Report,
): Promise<Report["readOnly"]> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await signInContext(context, args.baseUrl, args.readKey);
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  watch(page, new URL(args.baseUrl).origin, report);
  const main = page.locator("main");
  const writeControls: Record<string, string[]> = {};
  const pages: string[] = [];
  const look = async (name: string, hash: string, ready: string) => {
    await page.goto(`${args.baseUrl}/${hash}`);
    await main.getByRole("heading", { name: ready }).first().waitFor();
    pages.push(name);
    writeControls[name] = [];
    for (const [role, label] of WRITE_CONTROLS) {
      if (await main.getByRole(role, { name: label }).count()) {
        writeControls[name].push(String(label));
      }
    }
    report.axe.push(...await axeScan(page, `${name} (read-only)`));
    report.axePages.push(`${name} (read-only)`);
    const path = `${args.shotDir}/${name}-read-only.png`;
    await page.screenshot({ path, fullPage: true });
    report.screenshots.push(path);
  };
  try {
    await look("targets", "#/targets", "Targets (4)");
    const hookUrl = await main.getByRole("listitem", { name: "ops-hook" }).locator("dd code")
      .first().innerText();
    const tag = await page.locator("header .scope").innerText();
    await look("alert-policy", "#/alert-policy", "In effect");
    await look("project-alerts", `#/projects/${args.project}/alerts`, "In effect for");
    // Not "Upcoming (1)": that window may be under way by now (it starts on the hour).
    await look("maintenance", `#/projects/${args.project}/maintenance`, "Past (0)");
    await look("status-page", `#/projects/${args.project}/status-page`, "Public");
    await look("badges", `#/projects/${args.project}/badges`, "Badges (0)");
    await look("incidents", "#/incidents", "Page 1");
    await look("settings", "#/settings", "This service");
    return { tag, pages, writeControls, hookUrl };
  } finally {
    await context.close();
  }
}

if (import.meta.main) {
  const report = await run(JSON.parse(Deno.args[0]));
  console.log(JSON.stringify({ report }));
  Deno.exit(0);
}
