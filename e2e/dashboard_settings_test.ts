/**
 * The dashboard's settings screens and its incidents page in a real headless Chromium (Debian's
 * `chromium`), driven by playwright-core in e2e/testdata/dashboard_settings_browser.ts, against
 * the real server (`server/main.ts` in a subprocess, with its runner):
 *
 * - notification targets: a webhook made without a key shows the generated key once (copied),
 *   then masked; a test send delivered; a Slack URL refused, then one shown by its host only
 *   whose test fails with the receiver's status; a mail target's recipients edited; a target in
 *   use refused deletion with the reason; another deleted;
 * - the alert policy and a project's overrides saved through their forms (checked over REST);
 * - maintenance windows: an upcoming one, a past one, an end before the start refused beside its
 *   field, a delete;
 * - the status page made public: its page and JSON answer, the project page links to it;
 * - a badge made for a probe, its Markdown copied, its preview drawn, rotated (the old token
 *   stops), deleted;
 * - the Settings page: the I'm alive settings changed through its form, a value past the rules
 *   refused beside its field in words, the service's version, database, key scope and runners;
 * - incidents across projects: a resolved one on the first view when none is open; open ones
 *   listed first, a project filter, acknowledge, resolved ones in pages of 25;
 * - a read-only key sees each screen without a control that writes;
 * - each screen in light, dark and at 375 px: axe-core finds nothing (any impact), nothing is
 *   wider than the screen; no CSP violation, nothing from another origin, no page error.
 *
 * Screenshots go to DASHBOARD_SCREENSHOT_DIR, or a temporary folder; the test prints which.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { cleanEnv as env, runBrowserScript } from "./testdata/browser_run.ts";
import { createPostgresDatabase, uniqueName } from "../server/testing/app.ts";
import {
  isListeningLine,
  restCall,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import type { Args, Report } from "./testdata/dashboard_settings_browser.ts";

const KEY = "dashboard-settings-key-0123456789";
const READ_KEY = "dashboard-settings-reader-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/dashboard_settings_browser.ts", import.meta.url);
/** The browser run gives up after this long rather than hang the suite. */
const BROWSER_DEADLINE_MS = 300_000;

const adminUrl = Deno.env.get("TEST_DATABASE_URL");

/** The browser run: its report, or a failure with its log (`runBrowserScript`). */
function runBrowser(args: Args): Promise<Report> {
  return runBrowserScript<Report>(BROWSER_SCRIPT, args, { deadlineMs: BROWSER_DEADLINE_MS });
}

Deno.test({
  name: "the dashboard's settings screens and incidents page: main paths, read-only view, " +
    "light, dark, 375 px, accessibility (headless Chromium)",
  ignore: skipWithoutChromium("the dashboard's settings screens"),
  async fn() {
    assertChromium();
    const shotDir = Deno.env.get("DASHBOARD_SCREENSHOT_DIR") ??
      await Deno.makeTempDir({ prefix: "dashboard-settings-shots-" });
    await Deno.mkdir(shotDir, { recursive: true });
    const dataDir = await Deno.makeTempDir({ prefix: "dashboard-settings-" });
    const database = adminUrl ? await createPostgresDatabase(adminUrl) : null;
    let server: ServerProcess | undefined;
    try {
      server = await startServerProcess({
        env: env({
          SERVICE_API_KEY: KEY,
          SERVICE_API_KEYS_READONLY: READ_KEY,
          DATA_DIR: dataDir,
          ...(database && { DATABASE_URL: database.url }),
          // The script's local target (probes and webhook receivers) is on loopback.
          PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
          // A new probe runs once when created, then a day later: the others are run-now's.
          PROBE_INTERVAL_SECONDS: "86400",
        }),
        clearEnv: true,
        output: "capture",
        readyLine: isListeningLine,
      });
      const project = uniqueName("shop");
      const other = uniqueName("ops");
      const r = await runBrowser({
        chromium: CHROMIUM,
        baseUrl: server.url,
        apiKey: KEY,
        readKey: READ_KEY,
        project,
        other,
        shotDir,
      });
      console.log(`screenshots (in ${shotDir}): ${r.screenshots.length} files`);
      console.log(`Tab presses per keyboard step: ${JSON.stringify(r.keyboard)}`);

      // Targets: the generated key once, in full, copied; masked in the list afterwards.
      const t = r.targets;
      assert.match(t.generatedKey, /^whsec_[A-Za-z0-9+/]{40,}={0,2}$/);
      assert.equal(t.copiedKey, t.generatedKey);
      assert.equal(t.listedKey, "whsec_…", "masked in the list");
      assert.match(t.webhookTest, /^Test delivered to ops-hook \(1 attempt\)\.$/);
      // The button was disabled while it sent: focus is back on it, not on the page.
      assert.equal(t.focusAfterTest, "Send test to ops-hook");
      assert.match(t.slackUrlShown, /^http:\/\/127\.0\.0\.1:\d+\/…$/, "only the Slack URL's host");
      assert.equal(t.discordTest, "Test delivered to team-discord (1 attempt).");
      assert.match(t.slackTest, /^Test to team-slack failed \(1 attempt\): HTTP 404\.$/);
      const refused = await restCall(server, KEY, "POST", "/notification-targets", {
        name: "x",
        kind: "slack",
        url: "not a url",
      });
      const apiMessage = refused.body.error.details
        .find((d: { path: string }) => d.path === "url").message;
      // The API's message beside the URL field, as a sentence (its first letter a capital).
      assert.equal(t.badUrlError.toLowerCase(), apiMessage.toLowerCase());
      assert.equal(t.badUrlFocused, "new-target-url");
      assert.equal(t.edited, "Target oncall was saved.");
      assert.equal(t.mailRecipients, "oncall@example.com, ops@example.com");
      assert.deepEqual(
        [t.keyFieldType, t.keyFieldEmpty, t.keyAfterEdit],
        ["password", true, "whsec_…"],
        "a new key is typed into an empty password field and shown masked once saved",
      );
      assert.match(t.inUse, /Notification target is in use: named by the alert policy's targets/);
      assert.deepEqual(t.deleted, ["log", "oncall", "ops-hook", "team-discord"]);

      // The policy and a project's overrides, as the API now has them.
      assert.equal(r.policy.focusAfterSave, "Save policy");
      assert.deepEqual(JSON.parse(r.policy.saved), {
        enabled: true,
        targets: ["log", "ops-hook"],
        failure_threshold: 1,
        success_threshold: 1,
        reminder_minutes: 0,
        notify_degraded: true,
        notify_recovered: true,
        location_quorum: "majority",
        escalation: [],
        flap_changes: 0,
        flap_minutes: 30,
      });
      assert.match(r.policy.shown, /Targets\s+log, ops-hook/);
      assert.deepEqual(JSON.parse(r.overrides.saved), {
        enabled: null,
        targets: null,
        failure_threshold: null,
        success_threshold: null,
        reminder_minutes: 30,
        notify_degraded: false,
        notify_recovered: null,
        location_quorum: null,
        escalation: null,
        flap_changes: null,
        flap_minutes: null,
      });
      assert.match(r.overrides.effective, /Reminder every \(minutes\)\s+30/);
      assert.match(r.overrides.effective, /On degraded\s+not notified/);

      // Maintenance.
      const m = r.maintenance;
      // The form offered the next full hour at least five minutes ahead (read a moment later).
      assert.match(m.offeredStart, /^\d{4}-\d\d-\d\d \d\d:00$/);
      assert.ok(
        m.offeredLeadMinutes >= 4.5 && m.offeredLeadMinutes <= 65,
        `${m.offeredStart}: ${m.offeredLeadMinutes} min ahead`,
      );
      assert.equal(m.upcoming.length, 1);
      assert.match(m.upcoming[0], /Database upgrade/);
      assert.equal(m.past.length, 1);
      assert.match(m.past[0], /2026-01-10 08:00:00 UTC[\s\S]*2026-01-10 09:30:00 UTC/);
      assert.match(m.past[0], /1 h 30 min[\s\S]*Network move/);
      assert.ok(m.endsError.length > 0, "the end before the start is refused beside Ends");
      assert.deepEqual(m.afterDelete, ["Database upgrade"]);
      // The row and its Delete are gone: focus is on what the page says happened.
      assert.match(m.focusAfterDelete, /^The window from .+ was deleted\.$/);

      // The status page.
      const s = r.statusPage;
      assert.equal(s.heading, "Public");
      assert.equal(s.pageLink, `/status/${project}`);
      assert.equal(s.pageTitle, "Shop status");
      assert.equal(s.jsonTitle, "Shop status");
      assert.match(s.projectLink, new RegExp(`Public status page: /status/${project} \\(JSON\\)`));
      assert.equal(s.probesListed.length, 2);
      assert.deepEqual(s.chosenProbes, ["Checkout"], "the page shows the probe chosen");
      assert.ok(s.probesListed.some((p) => p.startsWith("Checkout")));

      // Badges.
      const b = r.badges;
      const link = `(${server.url}/status/${project})`;
      assert.match(
        b.markdown,
        /^\[!\[.+ status\]\(http:\/\/127\.0\.0\.1:\d+\/badge\/[\w-]{43}\/status\.svg\)\]/,
      );
      assert.ok(b.markdown.endsWith(link), b.markdown);
      assert.equal(b.copied, b.markdown);
      assert.match(b.html, /^<a href="[^"]+"><img src="[^"]+\/status\.svg" alt="[^"]+"><\/a>$/);
      assert.ok(b.previewWidth > 20, "the preview shows the badge");
      assert.notEqual(b.rotatedMarkdown, b.markdown);
      assert.equal(b.oldTokenStatus, 404, "the old token stops at once");
      assert.equal(b.newTokenStatus, 200);
      assert.equal(b.snippetAgain, b.rotatedMarkdown, "the snippet again, token unchanged");
      assert.match(b.afterDelete, /Badge \d+ was deleted/);
      assert.equal(b.focusAfterDelete, b.afterDelete, "focus is on the status line");

      // The Settings page: the I'm alive settings as the API has them, changed through the
      // form; past the rules, the API's refusal in the form's words and nothing changed.
      const st = r.settings;
      assert.match(st.shown, /Reports\s+off[\s\S]*Every\s+24 hours[\s\S]*Channels\s+log/);
      assert.match(st.service, /Version\s+\d+\.\d+\.\d+/);
      assert.match(
        st.service,
        database ? /Database\s+PostgreSQL/ : /Database\s+embedded PostgreSQL \(PGlite/,
      );
      assert.match(st.service, /Your key\s+may read and write/);
      assert.match(st.service, /local \(built in\): 1 runner, \d+ probes?, \d+ checks\/min/);
      const saved = { enabled: true, interval_hours: 6, channels: ["log", "webhook"] };
      assert.deepEqual(JSON.parse(st.saved), saved);
      assert.match(st.savedShown, /Reports\s+sent[\s\S]*Every\s+6 hours[\s\S]*log, webhook/);
      assert.equal(st.refused, "Must be at most 24");
      assert.equal(st.refusedFocused, "Interval (hours)");
      assert.ok(st.channelsRefused.length > 0, "no channel is refused beside Channels");
      assert.deepEqual(JSON.parse(st.afterRefusal), saved, "a refusal changes nothing");

      // Incidents across projects: with none open, the resolved one on the page's first view.
      const i = r.incidents;
      assert.deepEqual(i.nothingOpen.openHeading, "No open incidents");
      assert.deepEqual(i.nothingOpen.resolvedHeading, "Page 1: 1 resolved incident");
      assert.equal(i.nothingOpen.rows.length, 1);
      assert.match(i.nothingOpen.rows[0], /Checkout[\s\S]*resolved[\s\S]*recovered/);
      assert.equal(i.openHeading, "2 open incidents");
      assert.equal(i.openRows, 2);
      assert.equal(i.filteredRows.length, 1);
      assert.match(i.filteredRows[0], /Ops API[\s\S]*HTTP 503/);
      assert.match(i.acknowledged, /Acknowledged/);
      assert.match(i.focusAfterAcknowledge, /^Acknowledged /, "focus stays where the button was");
      assert.equal(i.resolvedHeading, "Page 1: 25 resolved incidents");
      assert.equal(i.page1, 25);
      assert.equal(i.page2, 1);
      assert.match(i.pagerAfterNext, /Page 2/);
      const [page1, page2] = i.ids;
      assert.equal(new Set([...page1, ...page2]).size, 26, "two pages, no incident twice");
      assert.ok(Number(page1.at(-1)) > Number(page2[0]), "newest first, across the pages");

      assert.equal(i.fromProject, `Page 1: 25 resolved incidents in ${project}`);
      assert.deepEqual(i.afterReload, {
        heading: `Page 1: 25 resolved incidents in ${project}`,
        hash: `#/incidents?state=resolved&project=${project}`,
      });

      // A read-only key: every screen, no control that writes; a webhook's URL by its host.
      const ro = r.readOnly;
      assert.equal(ro.tag, "Read-only key");
      assert.deepEqual(ro.pages, [
        "targets",
        "alert-policy",
        "project-alerts",
        "maintenance",
        "status-page",
        "badges",
        "incidents",
        "settings",
      ]);
      for (const page of ro.pages) assert.deepEqual(ro.writeControls[page], [], page);
      assert.match(ro.hookUrl, /^http:\/\/127\.0\.0\.1:\d+\/…$/);

      for (const [page, width] of Object.entries(r.narrow)) {
        assert.ok(width <= 375, `${page} is ${width} px wide at 375 px`);
      }
      assert.equal(Object.keys(r.narrow).length, 9);
      // 9 screens (the project page with its links too) in light, dark and 375 px, and 8 with
      // the read-only key.
      assert.equal(r.axePages.length, 35, r.axePages.join(", "));
      assert.deepEqual(r.axe, [], "axe-core: no violations");
      assert.deepEqual(r.csp, [], "no Content-Security-Policy violations");
      assert.deepEqual(r.foreign, [], "nothing is loaded from another origin");
      assert.deepEqual(r.pageErrors, []);
      assert.deepEqual(r.consoleErrors, []);
    } finally {
      const stopped: Deno.CommandStatus | undefined = await server?.stop();
      await database?.drop();
      await Deno.remove(dataDir, { recursive: true });
      if (stopped) assert.equal(stopped.code, 0, server?.output());
    }
  },
});
