// A team's keys from the dashboard in headless Chromium, for e2e/team_walkthrough_test.ts, which
// runs it as a subprocess:
//
//   deno run -A e2e/testdata/team_browser.ts '<TeamArgs as JSON>'
//
// It asks the test (`{"ask": …}` on stdout) to use the keys it copied, then to try the one it
// revoked; its last line on stdout is `{"report": …}`; progress goes to stderr.
import type { Locator, Page } from "playwright-core";
import * as script from "./browser_script.ts";
import { ask } from "./dashboard_browser.ts";
import { signInContext } from "./sign_in.ts";

export interface TeamArgs {
  chromium: string;
  baseUrl: string;
  /** SERVICE_API_KEY: an admin. */
  apiKey: string;
  viewer: string;
  editor: string;
  /** The project the editor is limited to, and one it is not. */
  project: string;
  otherProject: string;
  shotDir: string;
}

/** An audit entry as the page shows it. */
export interface AuditRow {
  actor: string;
  operation: string;
  resource: string;
  change: string;
}

export interface TeamReport extends script.PageFindings {
  /** Each key as copied with the page's Copy button, and as its box shows it. */
  copied: Record<string, { copied: string; shown: string }>;
  /** The keys table's rows (name, role, projects, last used), before and after the revoke. */
  rows: string[];
  rowsAfterRevoke: string[];
  /** What the page said once the key was revoked. */
  revokedNote: string;
  /** The overview as the scoped editor signed in sees it: the projects it names. */
  editorProjects: string[];
  /** The main navigation's links as the scoped editor sees them, and the overview's. */
  editorNav: string[];
  editorLinks: string[];
  /** The user menu as the scoped editor sees it: name, role, projects. */
  editorMenu: string;
  /** The audit page: every entry, then those of the actor filter (the editor, then the admin). */
  audit: AuditRow[];
  auditByEditor: AuditRow[];
  auditByAdmin: AuditRow[];
}

const log = (text: string) => console.error(`team_browser: ${text}`);

/** The rows of the audit page's table. */
async function auditRows(main: Locator): Promise<AuditRow[]> {
  return await main.locator("table.audit tbody tr").evaluateAll((rows) =>
    rows.map((row) => {
      const cell = (label: string) =>
        (row.querySelector(`[data-label="${label}"]`) as HTMLElement | null)?.innerText
          .replace(/\s+/g, " ").trim() ?? "";
      return {
        actor: cell("Actor"),
        operation: cell("Operation"),
        resource: cell("Resource"),
        change: cell("Change"),
      };
    })
  );
}

/** Filters the audit page by `actor` and answers its rows once each is that actor's. */
async function auditOf(page: Page, main: Locator, actor: string): Promise<AuditRow[]> {
  await main.getByLabel("Actor").fill(actor);
  await main.getByRole("button", { name: "Filter" }).click();
  await page.waitForFunction(
    (name) => {
      const cells = [...document.querySelectorAll('table.audit [data-label="Actor"]')];
      return cells.length > 0 && cells.every((c) => c.textContent!.trim().startsWith(`${name} `));
    },
    actor,
  );
  return await auditRows(main);
}

function run(args: TeamArgs): Promise<TeamReport> {
  return script.inChromium(args.chromium, async (browser) => {
    const origin = new URL(args.baseUrl).origin;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    await signInContext(context, args.baseUrl, args.apiKey);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const report: TeamReport = {
      copied: {},
      rows: [],
      rowsAfterRevoke: [],
      revokedNote: "",
      editorProjects: [],
      editorNav: [],
      editorLinks: [],
      editorMenu: "",
      audit: [],
      auditByEditor: [],
      auditByAdmin: [],
      ...script.noFindings(),
    };
    const { main, nav, shot, scan } = script.pageTools(page, args, report);
    const keyRows = async () =>
      (await main.locator("table.keys tbody tr").allInnerTexts()).map((t) =>
        t.replace(/\s+/g, " ").trim()
      );

    // The keys page, from the main navigation: a viewer, then an editor of one project.
    await page.goto(`${args.baseUrl}/`);
    await nav.getByRole("link", { name: "API keys" }).click();
    await main.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    await main.locator("table.keys").waitFor();
    await scan("keys page");
    for (
      const [name, role, projects] of [
        [args.viewer, "viewer", ""],
        [args.editor, "editor", args.project],
      ]
    ) {
      await main.getByLabel("Name", { exact: true }).fill(name);
      await main.getByLabel("Role").selectOption(role);
      await main.getByLabel("Projects").fill(projects);
      await main.getByRole("button", { name: "Create key" }).click();
      await main.getByRole("heading", { name: `The key of ${name}` }).waitFor();
      await main.locator(`tr[data-key="${name}"]`).waitFor();
      await main.getByRole("button", { name: "Copy API key" }).click();
      await main.getByRole("status").filter({ hasText: "Copied." }).waitFor();
      report.copied[name] = {
        copied: await page.evaluate(() => navigator.clipboard.readText()),
        shown: await main.locator("#new-key").inputValue(),
      };
      await scan(`keys page, ${name} shown once`);
      log(`${name} created`);
    }
    await shot("keys-created");
    report.rows = await keyRows();

    // Each key used by the team's scripts (the test, over REST).
    await ask({
      use: { viewer: report.copied[args.viewer].copied, editor: report.copied[args.editor].copied },
    });

    // The scoped editor signed in to the dashboard in a browser of its own: its project alone.
    const editorContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      await signInContext(editorContext, args.baseUrl, report.copied[args.editor].copied);
      const editorPage = await editorContext.newPage();
      editorPage.setDefaultTimeout(20_000);
      const editor = script.pageTools(editorPage, args, report);
      await editorPage.goto(`${args.baseUrl}/`);
      await editor.main.getByRole("link", { name: args.project, exact: true }).first().waitFor();
      // The overview renders again as runs come in: the links are read until a reading holds
      // the project, not once (a reading taken while the list was replaced held none).
      let names = await editor.main.getByRole("link").allInnerTexts();
      for (let tries = 0; tries < 100 && !names.some((n) => n.trim() === args.project); tries++) {
        await editorPage.waitForTimeout(100);
        names = await editor.main.getByRole("link").allInnerTexts();
      }
      report.editorProjects = [args.project, args.otherProject].filter((p) =>
        names.some((n) => n.trim() === p)
      );
      report.editorNav = (await editor.nav.getByRole("link").allInnerTexts()).map((t) => t.trim());
      report.editorLinks = names.map((t) => t.trim());
      report.editorMenu = (await editorPage.locator(".user-menu").innerText()).replace(/\s+/g, " ")
        .trim();
      await editor.scan("overview as the scoped editor");
      await editor.shot("editor-overview");
    } finally {
      await editorContext.close();
    }

    // The viewer's key revoked from its row, after the question.
    await page.reload();
    const row = main.locator(`tr[data-key="${args.viewer}"]`);
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByRole("group").getByRole("button", { name: "Revoke" }).click();
    const note = main.getByRole("status").filter({ hasText: "revoked" });
    await note.waitFor();
    report.revokedNote = await note.innerText();
    await row.waitFor({ state: "detached" });
    report.rowsAfterRevoke = await keyRows();
    await scan("keys page after a revoke");
    await ask({ revoked: report.copied[args.viewer].copied });
    log("viewer revoked");

    // Who did what: the audit page, all of it, then by actor.
    await nav.getByRole("link", { name: "Audit log" }).click();
    await main.getByRole("heading", { name: "Audit log", level: 1 }).waitFor();
    await main.locator("table.audit tbody tr").first().waitFor();
    report.audit = await auditRows(main);
    await main.locator("table.audit details summary").first().click();
    await scan("audit page");
    await shot("audit-all");
    report.auditByEditor = await auditOf(page, main, args.editor);
    await shot("audit-editor");
    report.auditByAdmin = await auditOf(page, main, "key SERVICE_API_KEY");
    await scan("audit page filtered");
    log("audit read");
    return report;
  });
}

if (import.meta.main) await script.reportOf(run);
