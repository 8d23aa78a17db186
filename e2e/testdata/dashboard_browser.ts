// Drives the dashboard at / in headless Chromium for e2e/dashboard_test.ts, which runs it as a
// subprocess (playwright-core needs --allow-all, as for the /docs test). Two modes:
//
//   deno run -A e2e/testdata/dashboard_browser.ts main   '<MainArgs as JSON>'
//   deno run -A e2e/testdata/dashboard_browser.ts timing '<TimingArgs as JSON>'
//
// It asks the test for what only the test can do (change what the local target answers) with a
// line `{"ask": …}` on stdout, and waits for a line on stdin before going on. Its last line on
// stdout is `{"report": …}`; progress goes to stderr.
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";
import { signInContext } from "./sign_in.ts";

const TIMEOUT_MS = 20_000;
/** The impacts an accessibility finding must not have. */
const BLOCKING_IMPACTS = ["serious", "critical"];

/** A value of the page's storage holding `key` (the dashboard keeps none), or null. */
const keptKey = (page: Page, key: string) =>
  page.evaluate(
    (k) =>
      [...Object.values(sessionStorage), ...Object.values(localStorage)].find((v) =>
        v.includes(k)
      ) ?? null,
    key,
  );

export interface MainArgs {
  chromium: string;
  baseUrl: string;
  apiKey: string;
  /** A key of SERVICE_API_KEYS_READONLY. */
  readKey: string;
  /** The project the run creates through the dashboard. */
  project: string;
  /** `/health` of the local target, answering 503 until the run asks for 200. */
  targetUrl: string;
  /** A project made beforehand whose label is one long word, to see it wrap at 375 px. */
  longLabel: string;
  shotDir: string;
}

export interface TimingArgs {
  chromium: string;
  baseUrl: string;
  apiKey: string;
  shotDir: string;
}

export interface AxeFinding {
  page: string;
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

export interface MainReport {
  wrongKey: { message: string; stored: string | null };
  signedIn: { stored: boolean; localStorage: number; cookies: string };
  /** Tab presses each keyboard step took, by step. */
  keyboard: Record<string, number>;
  /** Whether the focused control showed a focus outline, for a link and a button. */
  focusVisible: { link: boolean; button: boolean };
  badUrl: { message: string; focusedField: string | null; invalid: string | null };
  /**
   * The `spellcheck` property of the fields that take keys, headers, JSON and pointers, by field
   * id: false for each (a template's `spellcheck="false"` is a truthy string, which turns it on).
   */
  spellcheck: Record<string, boolean>;
  created: { probeId: string; heading: string };
  failing: { runNow: string; state: string; incident: string; acknowledged: string };
  recovered: { runNow: string; state: string; openIncidents: string; incidentRows: string[] };
  chart: Record<string, { buckets: number; points: number; painted: number }>;
  /** The series' summary in the window the page opened on, and the labels of the time axis. */
  chartText: { opened: string; summary: string; ticks: string[]; daily: string[] };
  /**
   * At a glance: the overview row's last runs (`data-runs`, its label, the latest response time),
   * its 7-day cell, the time axis's labels as drawn, the outline of the heading a page focuses,
   * whether the probe form's "More settings" opened by itself, and the row of runs at
   * 375 px (its box).
   */
  glance: {
    runs: string;
    runsLabel: string;
    latency: string;
    week: string;
    drawnTicks: string;
    /** The outline style of the heading a page focuses, reached with the mouse and the keyboard. */
    headingRing: { mouse: string; keyboard: string };
    formFolded: boolean;
    narrowRuns: { x: number; width: number } | null;
  };
  /** The assertions form: a refused entry's message and focus, then the rows saved. */
  assertions: {
    statusError: string;
    focused: string | null;
    invalid: string | null;
    rows: string[];
  };
  /** At 375 px: the probe page's result cards, its pager, its height. */
  mobile: { resultCards: number; pager: string; height: number; longNameWraps: boolean };
  edited: { heading: string };
  toggled: { disabled: boolean; enabledAgain: boolean };
  narrow: Record<string, { scrollWidth: number; viewport: number }>;
  dark: { background: string; text: string };
  deleted: { probeNotice: string; projectNotice: string };
  rotatedKey: { message: string; stored: string | null };
  /**
   * Signed in with a read-only key (in a tab of its own): the header's tag, the controls that
   * change something found on each page (none expected), and what a form's route shows.
   */
  readOnly: {
    tag: string;
    pages: string[];
    writeControls: Record<string, string[]>;
    formRoute: string;
    stored: string | null;
  };
  signedOut: { stored: string | null; signInShown: boolean };
  axe: AxeFinding[];
  axePages: string[];
  /** Requests to other origins (none: no CDN). */
  foreign: string[];
  /** Content-Security-Policy violations reported by the browser. */
  csp: string[];
  consoleErrors: string[];
  pageErrors: string[];
  screenshots: string[];
}

export interface TimingReport {
  /** Milliseconds from navigation start to the overview fully drawn, per load. */
  drawnMs: { cold: number; warm: number[] };
  /** Of those, the `GET /api/v1/overview` call's: from its start to its last byte. */
  apiMs: { cold: number; warm: number[] };
  summary: string;
  rows: number;
  pager: string;
  chart: { buckets: number; points: number; painted: number };
  axe: AxeFinding[];
  csp: string[];
  pageErrors: string[];
  screenshots: string[];
}

const log = (text: string) => console.error(`dashboard_browser: ${text}`);

/** Lines from stdin, one at a time: the test's answers to `ask`. */
const stdinLines = (() => {
  const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return async (): Promise<string> => {
    while (!buffer.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("stdin closed while waiting for the test");
      buffer += value;
    }
    const line = buffer.slice(0, buffer.indexOf("\n"));
    buffer = buffer.slice(buffer.indexOf("\n") + 1);
    return line;
  };
})();

export async function ask(question: Record<string, unknown>): Promise<void> {
  console.log(JSON.stringify({ ask: question }));
  const answer = await stdinLines();
  if (answer.trim() !== "ok") throw new Error(`the test answered ${answer}`);
}

/** axe-core's browser build, read from the package the dev import map pins. */
const axeSource = Deno.readTextFileSync(new URL(import.meta.resolve("axe-core/axe.min.js")));

/** Runs axe on the page as it is and answers its serious and critical findings. */
export async function axeScan(page: Page, name: string): Promise<AxeFinding[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern: the page
  // itself allows no inline script.
  if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) {
    await page.evaluate(axeSource);
  }
  const results = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const axe = (globalThis as any).axe;
    const found = await axe.run(document, { resultTypes: ["violations"] });
    // deno-lint-ignore no-explicit-any
    return found.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact ?? "",
      help: v.help,
      // deno-lint-ignore no-explicit-any
      targets: v.nodes.map((n: any) => String(n.target)).slice(0, 5),
    }));
  });
  const blocking = results.filter((r: { impact: string }) => BLOCKING_IMPACTS.includes(r.impact));
  log(`axe on ${name}: ${results.length} findings, ${blocking.length} serious or critical`);
  return blocking.map((r: Omit<AxeFinding, "page">) => ({ page: name, ...r }));
}

/** What a page's focused element is called: its label, or its text. */
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

/**
 * Presses Tab (or Shift+Tab) until the focused element's name matches, as someone using the
 * keyboard alone would; answers how many presses it took. Throws after `max`.
 */
async function tabTo(
  page: Page,
  name: string | RegExp,
  { backward = false, max = 80 } = {},
): Promise<number> {
  const wanted = typeof name === "string" ? (n: string) => n === name : (n: string) => name.test(n);
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press(backward ? "Shift+Tab" : "Tab");
    if (wanted(await focusedName(page))) return presses;
  }
  throw new Error(`${name} was not reached with ${max} presses of Tab`);
}

/**
 * The element's visible text once it reads `wanted`, looked at every 100 ms for 10 s (the
 * overview redraws its rows when its data comes back: a read in between can see a row being
 * replaced, as a CI run once did); the last text seen when it never does.
 */
async function settledText(locator: Locator, wanted: string): Promise<string> {
  let seen = "";
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    seen = await locator.first().innerText({ timeout: 1_000 }).catch(() => "");
    if (seen.trim() === wanted) return wanted;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return seen;
}

/** Whether the focused element draws an outline (`:focus-visible`). */
function outlined(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement;
    const style = getComputedStyle(el);
    return style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
  });
}

/**
 * The latency chart as drawn: its buckets, the buckets with a latency, and the canvas pixels in
 * the colours of its series (p50, p95, max): 0 when no series was drawn.
 */
async function chartState(
  page: Page,
): Promise<{ buckets: number; points: number; painted: number }> {
  await page.locator(".chart canvas").waitFor();
  return await page.evaluate(() => {
    const box = document.querySelector(".chart") as HTMLElement;
    const strip = document.querySelector(".strip") as SVGElement;
    const canvas = box.querySelector("canvas") as HTMLCanvasElement;
    const style = getComputedStyle(document.documentElement);
    const probe = document.createElement("canvas").getContext("2d", { willReadFrequently: true })!;
    const colors = ["--chart-p50", "--chart-p95", "--chart-max"].map((name) => {
      probe.fillStyle = style.getPropertyValue(name).trim();
      probe.fillRect(0, 0, 1, 1);
      return probe.getImageData(0, 0, 1, 1).data;
    });
    const { data } = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height);
    let painted = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] < 200) continue;
      const near = colors.some(([r, g, b]) =>
        Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 60
      );
      if (near) painted++;
    }
    return {
      buckets: Number(strip.dataset.buckets),
      points: Number(box.dataset.points),
      painted,
    };
  });
}

export function watch(
  page: Page,
  origin: string,
  report: { foreign: string[]; csp: string[]; pageErrors: string[] },
  consoleErrors?: string[],
) {
  page.on("request", (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) report.foreign.push(r.url());
  });
  page.on("pageerror", (e) => report.pageErrors.push(e.message));
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    const text = m.text();
    if (/Content.Security.Policy/i.test(text)) report.csp.push(text);
    // The API's refusals (401 for the wrong key, 422 for the bad URL) are logged by Chromium.
    else if (
      !/Failed to load resource: the server responded with a status of (401|422)/.test(text)
    ) {
      consoleErrors?.push(text);
    }
  });
}

/**
 * The outline of the heading a new page focuses (for screen readers), once it has it: "none" is
 * what a reader should see; "not focused" when the page did not focus it.
 */
async function focusedHeadingOutline(page: Page): Promise<string> {
  const focused = await page.waitForFunction(
    () => document.activeElement?.tagName === "H1",
    null,
    { timeout: 5_000 },
  ).then(() => true, () => false);
  if (!focused) return "not focused";
  return await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
}

async function main(args: MainArgs): Promise<MainReport> {
  const report: MainReport = {
    wrongKey: { message: "", stored: null },
    signedIn: { stored: false, localStorage: -1, cookies: "" },
    keyboard: {},
    focusVisible: { link: false, button: false },
    badUrl: { message: "", focusedField: null, invalid: null },
    spellcheck: {},
    created: { probeId: "", heading: "" },
    failing: { runNow: "", state: "", incident: "", acknowledged: "" },
    recovered: { runNow: "", state: "", openIncidents: "", incidentRows: [] },
    chart: {},
    chartText: { opened: "", summary: "", ticks: [], daily: [] },
    glance: {
      runs: "",
      runsLabel: "",
      latency: "",
      week: "",
      drawnTicks: "",
      headingRing: { mouse: "", keyboard: "" },
      formFolded: false,
      narrowRuns: null,
    },
    assertions: { statusError: "", focused: null, invalid: null, rows: [] },
    mobile: { resultCards: 0, pager: "", height: 0, longNameWraps: false },
    edited: { heading: "" },
    toggled: { disabled: false, enabledAgain: false },
    narrow: {},
    dark: { background: "", text: "" },
    deleted: { probeNotice: "", projectNotice: "" },
    rotatedKey: { message: "", stored: "" },
    readOnly: { tag: "", pages: [], writeControls: {}, formRoute: "", stored: null },
    signedOut: { stored: null, signInShown: false },
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
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(TIMEOUT_MS);
    watch(page, new URL(args.baseUrl).origin, report, report.consoleErrors);
    const shot = async (name: string) => {
      const path = `${args.shotDir}/${name}.png`;
      await page.screenshot({ path, fullPage: true });
      report.screenshots.push(path);
    };
    const scan = async (name: string) => {
      report.axe.push(...await axeScan(page, name));
      report.axePages.push(name);
    };
    const storedKey = (key = args.apiKey) => keptKey(page, key);
    const main = page.locator("main");
    const heading = () => main.locator("h1").innerText();
    const spellcheck = async (...ids: string[]) => {
      for (const id of ids) {
        report.spellcheck[id] = await page.locator(`#${id}`)
          .evaluate((field) => (field as HTMLElement).spellcheck);
      }
    };

    // Sign-in: a wrong key is refused and not kept.
    log("sign in");
    await page.goto(`${args.baseUrl}/`);
    await page.getByLabel("API key").waitFor();
    await spellcheck("api-key");
    await scan("sign-in");
    await page.getByLabel("API key").fill("not-the-key-0123456789");
    await page.getByRole("button", { name: "Sign in" }).click();
    report.wrongKey.message = await page.locator("#api-key-error").innerText();
    report.wrongKey.stored = await storedKey("not-the-key-0123456789");
    await shot("sign-in-refused");

    // The right key, typed and sent with Enter.
    await page.getByLabel("API key").fill("");
    await page.getByLabel("API key").focus();
    await page.keyboard.type(args.apiKey);
    await page.keyboard.press("Enter");
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    report.signedIn = {
      stored: (await storedKey()) !== null,
      localStorage: await page.evaluate(() => localStorage.length),
      cookies: await page.evaluate(() => document.cookie),
    };

    // Keyboard alone: a new project, then a probe whose URL the API refuses, then a good one.
    log("keyboard: new project");
    report.keyboard.newProjectLink = await tabTo(page, "New project");
    report.focusVisible.link = await outlined(page);
    await page.keyboard.press("Enter");
    await main.getByRole("heading", { name: "New project" }).waitFor();
    report.keyboard.nameField = await tabTo(page, "Name");
    await page.keyboard.type(args.project);
    report.keyboard.labelField = await tabTo(page, "Label (optional)");
    await page.keyboard.type("Checkout service");
    report.keyboard.createProject = await tabTo(page, "Create project");
    report.focusVisible.button = await outlined(page);
    await page.keyboard.press("Enter");
    await main.getByRole("heading", { name: "Checkout service" }).waitFor();

    log("keyboard: new probe with a bad URL");
    report.keyboard.addProbe = await tabTo(page, "Add probe");
    await page.keyboard.press("Enter");
    const newProbeHeading = main.getByRole("heading", { name: `New probe in ${args.project}` });
    // Seen once in CI on a loaded machine: Enter on "Add probe" led nowhere within 20 s. Say
    // where focus and the page were, then reach the link again once (keyboard still).
    if (!(await newProbeHeading.waitFor({ timeout: 5_000 }).then(() => true, () => false))) {
      const where = await page.evaluate(() => ({
        url: location.href,
        focused: document.activeElement?.outerHTML.slice(0, 200) ?? null,
      }));
      // Seen in CI too: the form opened just after the 5 s (its heading focused by then); then
      // there is no "Add probe" to reach again, and the form is used as it is.
      if (!where.url.endsWith("/new-probe")) {
        log(`"Add probe" did not open the form: ${JSON.stringify(where)}; trying again`);
        report.keyboard.addProbeRetries = 1;
        await tabTo(page, "Add probe");
        await page.keyboard.press("Enter");
      }
      await newProbeHeading.waitFor();
    }
    report.glance.formFolded = await main.locator("details.more")
      .evaluate((d) => !(d as HTMLDetailsElement).open);
    report.keyboard.urlField = await tabTo(page, "URL");
    await page.keyboard.type("not a url");
    report.keyboard.createProbe = await tabTo(page, "Create probe");
    await page.keyboard.press("Enter");
    const urlError = page.locator("#field-url-error");
    await urlError.waitFor();
    report.badUrl = {
      message: await urlError.innerText(),
      focusedField: await page.evaluate(() => document.activeElement?.getAttribute("name") ?? null),
      invalid: await page.getByLabel("URL").getAttribute("aria-invalid"),
    };
    await spellcheck("field-headers", "field-body");
    await scan("probe form with an error");
    await shot("probe-form-refused");

    // Focus is back on the URL field: replace its text, name the probe, create it.
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type(args.targetUrl);
    report.keyboard.probeLabel = await tabTo(page, "Label (optional)");
    await page.keyboard.type("Checkout health");
    report.keyboard.createProbeAgain = await tabTo(page, "Create probe");
    await page.keyboard.press("Enter");
    await main.getByRole("heading", { name: "Checkout health" }).waitFor();
    report.created = {
      probeId: decodeURIComponent(new URL(page.url()).hash.split("/").at(-1) ?? ""),
      heading: await heading(),
    };

    log("keyboard: run now while the target fails");
    report.keyboard.runNow = await tabTo(page, "Run now");
    await page.keyboard.press("Enter");
    const ran = main.getByText(/^Ran now:/);
    await ran.waitFor();
    report.failing.runNow = await ran.innerText();
    await main.locator(".page-head .state").getByText("down").waitFor();

    // Back to the overview (Shift+Tab into the top bar): the incident is at the top.
    report.keyboard.overviewLink = await tabTo(page, "Overview", { backward: true });
    await page.keyboard.press("Enter");
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    report.glance.headingRing.keyboard = await focusedHeadingOutline(page);
    const incident = main.locator(".incident").filter({ hasText: "Checkout health" });
    await incident.waitFor();
    report.failing.incident = await incident.innerText();
    const row = main.locator("tr").filter({ hasText: "Checkout health" });
    await row.locator(".state", { hasText: "down" }).waitFor();
    report.failing.state = await settledText(row.locator(".state"), "down");
    await scan("overview with an incident");
    await shot("overview-failing");
    report.keyboard.acknowledge = await tabTo(page, /^Acknowledge incident/);
    await page.keyboard.press("Enter");
    await incident.getByText("Acknowledged").waitFor();
    report.failing.acknowledged = await incident.innerText();

    // The target recovers; a run now brings the probe up and resolves the incident.
    log("the target recovers");
    await ask({ health: 200 });
    await row.getByRole("link", { name: "Checkout health" }).click();
    await main.getByRole("heading", { name: "Checkout health" }).waitFor();
    await main.getByRole("button", { name: "Run now" }).click();
    await main.getByText(/^Ran now: up/).waitFor();
    report.recovered.runNow = await main.getByText(/^Ran now:/).innerText();
    await main.locator(".page-head .state").getByText("up").waitFor();
    // Each location's own state (the built-in one alone here).
    await main.locator(".facts dd").getByText("local: up").waitFor({ timeout: 10_000 });
    report.recovered.incidentRows = await main.locator("section", { hasText: "Incidents" })
      .locator("tbody tr").allInnerTexts();

    log("charts");
    await main.locator(".chart canvas").waitFor();
    // A new probe's page opens on the hour, minute by minute; the chart redraws after the run.
    await page.waitForFunction(() =>
      Number((document.querySelector(".chart") as HTMLElement)?.dataset.points) > 0
    );
    report.chartText.opened = await main.locator('input[name="series-window"]:checked')
      .getAttribute("value") ?? "";
    report.chartText.summary = await main.locator("#series-title ~ p.muted").first().innerText();
    report.chart["1h"] = await chartState(page);
    report.glance.drawnTicks = await main.locator(".chart .uplot").first()
      .getAttribute("data-ticks") ?? "";

    // The time axis's labels as the chart makes them (24-hour UTC), for a 6-hour and a 30-day step.
    const ticks = await page.evaluate(async () => {
      const charts = await import("/ui/charts.js");
      const at = Date.parse("2026-11-24T22:00:00Z") / 1000;
      return {
        ticks: charts.timeTicks([at, at + 3600, at + 7200, at + 10800], 3600),
        daily: charts.timeTicks([at, at + 86_400], 86_400),
      };
    });
    report.chartText.ticks = ticks.ticks;
    report.chartText.daily = ticks.daily;
    await scan("probe page");
    await shot("probe");
    await main.getByLabel("24 hours").check();
    await page.waitForFunction(() =>
      Number((document.querySelector(".strip") as SVGElement)?.dataset.buckets) === 288
    );
    report.chart["24h"] = await chartState(page);
    await main.getByLabel("7 days").check();
    await page.waitForFunction(() =>
      Number((document.querySelector(".strip") as SVGElement)?.dataset.buckets) === 168
    );
    report.chart["7d"] = await chartState(page);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" })
      .click();
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    report.glance.headingRing.mouse = await focusedHeadingOutline(page);
    const rowAgain = main.locator("tr").filter({ hasText: "Checkout health" });
    await rowAgain.locator(".state", { hasText: "up" }).waitFor();
    report.recovered.state = await settledText(rowAgain.locator(".state"), "up");
    report.recovered.openIncidents = await main.locator(".incidents").innerText();
    const runs = rowAgain.locator("svg.runs");
    report.glance.runs = await runs.getAttribute("data-runs") ?? "";
    report.glance.runsLabel = await runs.getAttribute("aria-label") ?? "";
    report.glance.latency = await rowAgain.locator(".last-runs .latency").innerText();
    report.glance.week = await rowAgain.locator('[data-label="Uptime 7 d"]').innerText();
    await shot("overview-recovered");

    // The locations and their runners' health: the built-in one, whose runner made the runs.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Locations" })
      .click();
    await main.getByRole("heading", { name: "Locations" }).waitFor();
    await main.locator("tbody tr").filter({ hasText: "local" }).first().waitFor();
    await scan("locations");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" })
      .click();
    await main.getByRole("heading", { name: "Overview" }).waitFor();

    // 375 px wide: nothing wider than the screen.
    log("narrow screen");
    await page.setViewportSize({ width: 375, height: 812 });
    const width = async (name: string) => {
      report.narrow[name] = {
        scrollWidth: await page.evaluate(() => document.documentElement.scrollWidth),
        viewport: 375,
      };
    };
    await width("overview");
    report.glance.narrowRuns = await rowAgain.locator("svg.runs").boundingBox();
    const longHead = main.locator(".project-head h2").filter({ hasText: args.longLabel });
    const longBox = await longHead.boundingBox();
    const lineHeight = await longHead.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight));
    const longNameWraps = !!longBox && longBox.x + longBox.width <= 375 &&
      longBox.height > 1.5 * lineHeight;
    await scan("overview at 375 px");
    await shot("overview-375");
    await rowAgain.getByRole("link", { name: "Checkout health" }).click();
    await main.locator(".chart canvas").waitFor();
    await width("probe");
    report.mobile = {
      resultCards: await main.locator("section", { hasText: "Recent results" })
        .locator("tbody tr").count(),
      pager: await main.locator('nav[aria-label="Result pages"] span').innerText(),
      height: await page.evaluate(() => document.documentElement.scrollHeight),
      longNameWraps,
    };
    await scan("probe page at 375 px");
    await shot("probe-375");
    await page.setViewportSize({ width: 1280, height: 900 });

    // The system's dark setting.
    log("dark scheme");
    await page.emulateMedia({ colorScheme: "dark" });
    report.dark = await page.evaluate(() => ({
      background: getComputedStyle(document.body).backgroundColor,
      text: getComputedStyle(document.body).color,
    }));
    await scan("probe page, dark");
    await shot("probe-dark");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" })
      .click();
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    await scan("overview, dark");
    await shot("overview-dark");
    await page.emulateMedia({ colorScheme: "light" });

    // A read-only key, in a tab of its own: the same pages, none of the controls that write.
    log("a read-only key");
    report.readOnly = await readOnlyTab(browser, args, report);

    // Edit the probe; disable and enable the project; delete both.
    log("edit, disable, enable, delete");
    await main.locator("tr").filter({ hasText: "Checkout health" }).getByRole("link").click();
    await main.getByRole("link", { name: "Edit probe" }).click();
    await main.getByRole("heading", { name: "Edit probe" }).waitFor();
    await main.getByLabel("Label (optional)").fill("Checkout");
    // Assertions with fields: a status the API refuses, its message beside the field.
    log("assertions form");
    await main.getByLabel("Status codes and classes").fill("2xx, 999");
    await main.getByRole("button", { name: "Save probe" }).click();
    await page.locator("#assert-status-error").waitFor();
    report.assertions.statusError = await page.locator("#assert-status-error").innerText();
    report.assertions.focused = await page.evaluate(() => document.activeElement?.id ?? null);
    report.assertions.invalid = await page.locator("#assert-status").getAttribute("aria-invalid");
    await scan("probe form, assertions refused");
    await shot("assertions-refused");
    await main.getByLabel("Status codes and classes").fill("2xx");
    await main.getByRole("button", { name: "Add JSON check" }).click();
    await page.locator("#assert-json-0-path").fill("/status");
    await page.locator("#assert-json-0-value").fill("UP");
    await main.getByRole("button", { name: "Add header check" }).click();
    await page.locator("#assert-header-0-name").fill("Content-Type");
    await page.locator("#assert-header-0-value").fill("json");
    await spellcheck(
      "assert-json-0-path",
      "assert-json-0-value",
      "assert-header-0-name",
      "assert-header-0-value",
    );
    await shot("assertions-form");
    await main.getByRole("button", { name: "Save probe" }).click();
    await main.getByRole("heading", { name: "Checkout", exact: true }).waitFor();
    report.edited.heading = await heading();
    report.assertions.rows = await main.locator("ul.assertions li").allInnerTexts();

    await main.locator(".crumbs").getByRole("link", { name: args.project }).click();
    await main.getByRole("button", { name: "Disable project" }).click();
    await main.getByRole("button", { name: "Enable project" }).waitFor();
    report.toggled.disabled = await main.locator(".page-head .tag", { hasText: "disabled" })
      .isVisible();
    await scan("project page");
    await shot("project-disabled");
    await main.getByRole("button", { name: "Enable project" }).click();
    await main.getByRole("button", { name: "Disable project" }).waitFor();
    report.toggled.enabledAgain = !(await main.locator(".page-head .tag").isVisible());

    await main.locator("tr").filter({ hasText: "Checkout" }).getByRole("link").click();
    await main.getByRole("button", { name: "Delete probe" }).click();
    await main.getByRole("group").getByRole("button", { name: "Delete probe" }).click();
    await main.getByText("No probes yet.").waitFor();
    report.deleted.probeNotice = await main.locator(".notice").innerText();
    await main.getByRole("button", { name: "Delete project" }).click();
    await main.getByRole("button", { name: "Delete project and its probes" }).click();
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    report.deleted.projectNotice = await main.locator(".notice").innerText();

    // A session that is no longer accepted (ended elsewhere): the page signs out, saying why.
    log("an ended session");
    await page.context().addCookies([{
      name: "probe-session",
      value: "pds_ended-elsewhere-0123456789",
      url: args.baseUrl,
      httpOnly: true,
      sameSite: "Lax",
    }]);
    await page.reload();
    await page.getByLabel("API key").waitFor();
    report.rotatedKey = {
      message: await page.locator(".notice").innerText(),
      stored: await storedKey(),
    };
    await page.getByLabel("API key").fill(args.apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await main.getByRole("heading", { name: "Overview" }).waitFor();

    log("sign out");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    report.signedOut = {
      stored: await storedKey(),
      signInShown: await page.getByRole("button", { name: "Sign in" }).isVisible(),
    };
  } finally {
    await browser.close();
  }
  return report;
}

/** Controls that change something, by their accessible names. */
const WRITE_CONTROLS: [role: "link" | "button", name: string][] = [
  ["link", "New project"],
  ["link", "Create the first project"],
  ["link", "Add probe"],
  ["link", "Add a probe"],
  ["link", "Edit probe"],
  ["button", "Run now"],
  ["button", "Delete probe"],
  ["button", "Delete project"],
  ["button", "Disable project"],
  ["button", "Enable project"],
  ["button", "Save changes"],
  ["button", "Acknowledge"],
];

/**
 * Signs in with the read-only key in a new tab (sessionStorage is per tab), visits the overview,
 * the project and the probe once each is drawn, and lists the write controls each shows.
 */
async function readOnlyTab(
  browser: Browser,
  args: MainArgs,
  report: MainReport,
): Promise<MainReport["readOnly"]> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  watch(page, new URL(args.baseUrl).origin, report, report.consoleErrors);
  const main = page.locator("main");
  const found: Record<string, string[]> = {};
  const pages: string[] = [];
  const look = async (name: string) => {
    pages.push(name);
    found[name] = [];
    for (const [role, label] of WRITE_CONTROLS) {
      if (await page.getByRole(role, { name: label }).count()) found[name].push(label);
    }
  };
  try {
    await page.goto(`${args.baseUrl}/`);
    await page.getByLabel("API key").fill(args.readKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    const row = main.locator("tr").filter({ hasText: "Checkout health" });
    await row.waitFor();
    const tag = await page.locator("header .scope").innerText();
    await look("overview");
    await main.locator(".project-head a").filter({ hasText: args.project }).click();
    await main.getByRole("heading", { name: "Probes (1)" }).waitFor();
    await look("project");
    await main.locator("tr").filter({ hasText: "Checkout health" }).getByRole("link").click();
    await main.getByRole("heading", { name: "Recent results" }).waitFor();
    await main.getByRole("heading", { name: "Incidents" }).waitFor();
    await look("probe");
    await page.goto(`${args.baseUrl}/#/new-project`);
    await main.locator("h1").waitFor();
    const formRoute = await main.locator("h1").innerText();
    const stored = await keptKey(page, args.readKey);
    return { tag, pages, writeControls: found, formRoute, stored };
  } finally {
    await context.close();
  }
}

async function timing(args: TimingArgs): Promise<TimingReport> {
  const report: TimingReport = {
    drawnMs: { cold: 0, warm: [] },
    apiMs: { cold: 0, warm: [] },
    summary: "",
    rows: 0,
    pager: "",
    chart: { buckets: 0, points: 0, painted: 0 },
    axe: [],
    csp: [],
    pageErrors: [],
    screenshots: [],
  };
  const browser = await chromium.launch({ executablePath: args.chromium, args: CHROMIUM_ARGS });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // Signed in already: the load measured is the overview's, not the typing of a key.
    await signInContext(context, args.baseUrl, args.apiKey);
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    watch(page, new URL(args.baseUrl).origin, { foreign: [], ...report });
    const drawn = async () => {
      await page.locator("html[data-overview-drawn]").waitFor({ state: "attached" });
      return Number(await page.locator("html").getAttribute("data-overview-drawn"));
    };
    const apiCall = () =>
      page.evaluate(() => {
        const call = performance.getEntriesByType("resource")
          .find((e) => e.name.endsWith("/api/v1/overview"));
        return call ? Math.round(call.duration) : -1;
      });
    await page.goto(`${args.baseUrl}/`);
    report.drawnMs.cold = await drawn();
    report.apiMs.cold = await apiCall();
    for (let i = 0; i < 3; i++) {
      await page.reload();
      report.drawnMs.warm.push(await drawn());
      report.apiMs.warm.push(await apiCall());
    }
    const main = page.locator("main");
    report.summary = await main.locator(".summary").innerText();
    report.rows = await main.locator("table.probes tbody tr").count();
    report.pager = await main.locator(".pager span").innerText();
    report.axe = await axeScan(page, "overview of 1,000 probes");
    const path = `${args.shotDir}/overview-1000.png`;
    await page.screenshot({ path });
    report.screenshots.push(path);

    // A probe with 24 hours of results and 90 days of rollups: the chart over 90 days.
    await main.locator("table.probes tbody tr").first().getByRole("link").click();
    // The window is chosen once the probe's chart is drawn: a choice made while its page was
    // still loading was once undone by the page replacing its controls (the radio unchanged).
    await page.waitForSelector(".strip");
    await main.getByLabel("90 days").check();
    await page.waitForFunction(() =>
      Number((document.querySelector(".strip") as SVGElement)?.dataset.buckets) === 90
    );
    report.chart = await chartState(page);
    const chartPath = `${args.shotDir}/probe-90d.png`;
    await page.screenshot({ path: chartPath, fullPage: true });
    report.screenshots.push(chartPath);
  } finally {
    await browser.close();
  }
  return report;
}

if (import.meta.main) {
  const [mode, json] = Deno.args;
  const args = JSON.parse(json);
  const report = mode === "timing" ? await timing(args) : await main(args);
  console.log(JSON.stringify({ report }));
  Deno.exit(0);
}
