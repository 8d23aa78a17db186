// Signs in to the dashboard through a real OpenID provider in headless Chromium, for
// e2e/oidc_dashboard_test.ts, which runs it as a subprocess:
//
//   deno run -A e2e/testdata/oidc_browser.ts '<OidcArgs as JSON>'
//
// Its last line on stdout is `{"report": …}`.
import { type Browser, chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "./chromium.ts";
import { type AxeFinding, axeScan, watch } from "./dashboard_browser.ts";

export interface OidcArgs {
  chromium: string;
  baseUrl: string;
  /** What the sign-in button names (`OIDC_NAME`). */
  providerName: string;
  /** A user the groups claim maps to a role, and one it maps to none. */
  user: string;
  unmapped: string;
  shotDir: string;
}

/** What the dashboard showed a user signed in through the provider. */
export interface SignedIn {
  /** The user menu: the name, the role. */
  name: string;
  role: string;
  /** Whether the navigation offers "New project" (a role that may change things). */
  canCreate: boolean;
  /** What a script of the page sees of cookies (the session's is HttpOnly). */
  cookies: string;
}

export interface OidcReport {
  button: string;
  signedIn: SignedIn;
  /** After sign-out: the sign-in page, and whether the session still reads the API. */
  signedOut: { signInShown: boolean; apiStatus: number };
  /** A user no group maps: the provider signs them in, the service refuses them, saying why. */
  refused: { heading: string; reason: string; apiStatus: number };
  axe: AxeFinding[];
  foreign: string[];
  csp: string[];
  pageErrors: string[];
  screenshots: string[];
}

/** Signs `login` in at the provider's own pages (its login form, then its consent). */
async function atProvider(page: import("playwright-core").Page, login: string) {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
  await page.locator('button[type="submit"]').click(); // consent: Continue
}

async function run(args: OidcArgs): Promise<OidcReport> {
  const browser: Browser = await chromium.launch({
    executablePath: args.chromium,
    args: CHROMIUM_ARGS,
  });
  const report: OidcReport = {
    button: "",
    signedIn: { name: "", role: "", canCreate: false, cookies: "" },
    signedOut: { signInShown: false, apiStatus: 0 },
    refused: { heading: "", reason: "", apiStatus: 0 },
    axe: [],
    foreign: [],
    csp: [],
    pageErrors: [],
    screenshots: [],
  };
  const shot = async (page: import("playwright-core").Page, name: string) => {
    const path = `${args.shotDir}/${name}.png`;
    await page.screenshot({ path, fullPage: true });
    report.screenshots.push(path);
  };
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // The dashboard's own requests: the provider's pages are another origin, by design.
    const dashboard = { foreign: [] as string[], csp: report.csp, pageErrors: report.pageErrors };
    watch(page, new URL(args.baseUrl).origin, dashboard);
    const main = page.locator("main");
    await page.goto(`${args.baseUrl}/`);
    const button = page.getByRole("link", { name: `Sign in with ${args.providerName}` });
    report.button = await button.innerText();
    report.axe.push(...await axeScan(page, "sign-in with single sign-on"));
    // What the dashboard's pages fetched from elsewhere (the provider's pages are its own).
    const beforeProvider = [...dashboard.foreign];
    await button.click();
    await atProvider(page, args.user);
    await main.getByRole("heading", { name: "Overview" }).waitFor();
    dashboard.foreign.length = 0;
    const menu = page.locator("header .user-menu");
    report.signedIn = {
      name: await menu.locator(".user-name").innerText(),
      role: await menu.locator(".role").innerText(),
      canCreate: await page.getByRole("navigation", { name: "Main" })
        .getByRole("link", { name: "New project" }).isVisible(),
      cookies: await page.evaluate(() => document.cookie),
    };
    report.axe.push(...await axeScan(page, "overview, signed in by single sign-on"));
    await shot(page, "oidc-signed-in");
    report.foreign = [...beforeProvider, ...dashboard.foreign];

    await menu.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    report.signedOut = {
      signInShown: await page.getByRole("button", { name: "Sign in" }).isVisible(),
      apiStatus: (await context.request.get(`${args.baseUrl}/api/v1/projects`)).status(),
    };

    // Another user, in a fresh browser: the provider knows them, the service maps no role.
    const other = await browser.newContext();
    const second = await other.newPage();
    second.setDefaultTimeout(20_000);
    await second.goto(`${args.baseUrl}/`);
    await second.getByRole("link", { name: `Sign in with ${args.providerName}` }).click();
    await atProvider(second, args.unmapped);
    await second.getByRole("heading", { name: "Sign-in refused" }).waitFor();
    report.refused = {
      heading: await second.locator("h1").innerText(),
      reason: await second.locator("#reason").innerText(),
      apiStatus: (await other.request.get(`${args.baseUrl}/api/v1/projects`)).status(),
    };
    await shot(second, "oidc-refused");
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
