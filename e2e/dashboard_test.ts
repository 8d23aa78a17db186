/**
 * The dashboard at / in a real headless Chromium (Debian's `chromium`, which .ci/run installs),
 * driven by playwright-core in e2e/testdata/dashboard_browser.ts, against the real server
 * (`server/main.ts` in a subprocess, with its runner) and a local target:
 *
 * - sign-in refuses a wrong key; the right one starts a session (an HttpOnly cookie: no script
 *   sees it, and no storage of the page keeps the key); a session that has ended signs out with a
 *   message; sign-out ends it;
 * - with the keyboard alone: a project, a probe whose URL the API refuses (its message beside the
 *   field), the probe, run now while the target fails, the incident on the overview, acknowledged;
 * - the target recovers: run now, the probe up, the incident resolved; charts drawn with data;
 * - edit, disable and enable, delete; 375 px wide; the dark scheme; no CSP violation, nothing from
 *   another origin; axe-core finds nothing serious or critical on any page scanned;
 * - on PostgreSQL, the overview of 1,000 probes with 90 days of rollups and a day of results:
 *   the time until it is fully drawn is printed (measured, not asserted: machines differ).
 *
 * Screenshots go to DASHBOARD_SCREENSHOT_DIR, or a temporary folder; the test prints which.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { cleanEnv as env, runBrowserScript } from "./testdata/browser_run.ts";
import { fill } from "../bench/overview.ts";
import { sentence } from "../server/ui/messages.js";
import { openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { createPostgresDatabase, uniqueName } from "../server/testing/app.ts";
import {
  isListeningLine,
  restCall,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import { startTarget, type Target } from "../server/testing/target_server.ts";
import type {
  MainArgs,
  MainReport,
  TimingArgs,
  TimingReport,
} from "./testdata/dashboard_browser.ts";

const KEY = "dashboard-e2e-key-0123456789";
const READ_KEY = "dashboard-e2e-reader-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/dashboard_browser.ts", import.meta.url);
/** The browser run gives up after this long rather than hang the suite. */
const BROWSER_DEADLINE_MS = 240_000;

const adminUrl = Deno.env.get("TEST_DATABASE_URL");

async function screenshotDir(): Promise<string> {
  const dir = Deno.env.get("DASHBOARD_SCREENSHOT_DIR") ??
    await Deno.makeTempDir({ prefix: "dashboard-screenshots-" });
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

/** Runs the browser script in `mode` and answers its report (`runBrowserScript`). */
function runBrowser<R>(
  mode: "main" | "timing",
  args: MainArgs | TimingArgs,
  answer?: (question: Record<string, unknown>) => Promise<void>,
): Promise<R> {
  return runBrowserScript<R>(BROWSER_SCRIPT, args, {
    mode,
    answer,
    deadlineMs: BROWSER_DEADLINE_MS,
  });
}

/** The server as `deno task start` runs it, with the runner, on the given database. */
function startServer(vars: Record<string, string>): Promise<ServerProcess> {
  return startServerProcess({
    env: env({ SERVICE_API_KEY: KEY, SERVICE_API_KEYS_READONLY: READ_KEY, ...vars }),
    clearEnv: true,
    output: "capture",
    readyLine: isListeningLine,
  });
}

Deno.test({
  name: "the dashboard: sign-in, a probe failing then recovering, charts, forms, keyboard, " +
    "375 px, dark, accessibility (headless Chromium)",
  ignore: skipWithoutChromium("the dashboard"),
  async fn() {
    assertChromium();
    const shotDir = await screenshotDir();
    const dataDir = await Deno.makeTempDir({ prefix: "dashboard-e2e-" });
    // PostgreSQL when there is one (it starts in a second), else the embedded database.
    const database = adminUrl ? await createPostgresDatabase(adminUrl) : null;
    let target: Target | undefined;
    let server: ServerProcess | undefined;
    try {
      target = await startTarget();
      target.setHealth(503, { status: "DOWN" });
      server = await startServer({
        DATA_DIR: dataDir,
        ...(database && { DATABASE_URL: database.url }),
        // The target is on loopback, which the outbound policy refuses by default.
        PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
        // A new probe runs once when created, then a day later: the other runs are run-now's.
        PROBE_INTERVAL_SECONDS: "86400",
      });
      const s = server;
      // One failing run opens an incident, one passing run resolves it.
      const policy = await restCall(s, KEY, "PATCH", "/settings/alerts", {
        failure_threshold: 1,
        success_threshold: 1,
      });
      assert.equal(policy.status, 200, JSON.stringify(policy.body));

      const project = uniqueName("shop");
      // A project whose label is one long word: at 375 px it wraps instead of running off.
      const longLabel = `Warehouse${"AndDistribution".repeat(6)}Services`;
      const long = await restCall(s, KEY, "POST", "/projects", {
        project: uniqueName("long-name-of-a-project-for-narrow-screens"),
        label: longLabel,
      });
      assert.equal(long.status, 201, JSON.stringify(long.body));
      const t = target;
      const report = await runBrowser<MainReport>("main", {
        chromium: CHROMIUM,
        baseUrl: s.url,
        apiKey: KEY,
        readKey: READ_KEY,
        project,
        targetUrl: `${t.origin}/health`,
        longLabel,
        shotDir,
      }, async (question) => {
        assert.deepEqual(question, { health: 200 });
        t.setHealth(200, { status: "UP" });
        // 48 more runs within the minute: a probe minutes old with more than a page of results
        // (50) still opens on the hour, and its overview row has 20 runs to show.
        const list = await restCall(s, KEY, "GET", `/projects/${project}/probes`);
        const probeId = list.body.data[0].probe_id;
        for (let i = 0; i < 48; i++) {
          const ran = await restCall(s, KEY, "POST", `/projects/${project}/probes/${probeId}/run`);
          assert.equal(ran.status, 200, JSON.stringify(ran.body));
        }
      });
      console.log(`screenshots (in ${shotDir}): ${report.screenshots.join(", ")}`);
      console.log(`Tab presses per keyboard step: ${JSON.stringify(report.keyboard)}`);

      // Sign-in and sign-out.
      assert.match(report.wrongKey.message, /refused \(401/);
      assert.equal(report.wrongKey.stored, null, "a refused key is not kept");
      assert.deepEqual(report.signedIn, { stored: false, localStorage: 0, cookies: "" });
      assert.deepEqual(report.rotatedKey, {
        message: "Your session has ended: sign in again.",
        stored: null,
      });
      assert.deepEqual(report.signedOut, { stored: null, signInShown: true });

      // A read-only key sees the pages without a control that writes; a form's route says why.
      assert.equal(report.readOnly.tag, "Read-only key");
      assert.deepEqual(report.readOnly.pages, ["overview", "project", "probe"]);
      assert.deepEqual(report.readOnly.writeControls, { overview: [], project: [], probe: [] });
      assert.equal(report.readOnly.formRoute, "This key may only read");
      assert.equal(report.readOnly.stored, null, "the key is kept nowhere in the page");

      // The bad URL is refused with the API's own message, beside the field, focus on it.
      const refused = await restCall(s, KEY, "POST", `/projects/${project}/probes`, {
        url: "not a url",
      });
      assert.equal(refused.status, 422);
      const apiMessage = refused.body.error.details
        .find((d: { path: string }) => d.path === "url").message;
      // In the dashboard's words: a sentence, as messages.js makes it of the API's message.
      assert.equal(report.badUrl.message, sentence(apiMessage));
      assert.match(report.badUrl.message, /^[A-Z]/);
      assert.equal(report.badUrl.focusedField, "url");
      assert.equal(report.badUrl.invalid, "true");
      assert.deepEqual(report.focusVisible, { link: true, button: true });

      // No spell-checking in the fields for keys, headers, JSON and pointers.
      assert.deepEqual(report.spellcheck, {
        "api-key": false,
        "field-headers": false,
        "field-body": false,
        "assert-json-0-path": false,
        "assert-json-0-value": false,
        "assert-header-0-name": false,
        "assert-header-0-value": false,
      });

      // Failing, then recovered; what failed said in the words the alerts use.
      const cause = "answered HTTP 503, expected a status below 400";
      assert.match(report.failing.runNow, /^Ran now: down \(HTTP 503\)/);
      assert.ok(report.failing.runNow.endsWith(`: ${cause}.`), report.failing.runNow);
      assert.equal(report.failing.state, "down");
      assert.match(report.failing.incident, new RegExp(`Checkout health[\\s\\S]*${cause}`));
      assert.match(report.failing.acknowledged, /Acknowledged/);
      assert.match(report.recovered.runNow, /^Ran now: up \(HTTP 200\)/);
      assert.equal(report.recovered.state, "up");
      assert.match(report.recovered.openIncidents, /No open incidents/);
      assert.equal(report.recovered.incidentRows.length, 1);
      assert.match(report.recovered.incidentRows[0], /resolved[\s\S]*recovered/);

      // Charts from the first minute: a new probe's page opens on the hour, 60 one-minute
      // buckets, and says how little history there is; then 288 five-minute buckets, 168 hours.
      assert.equal(report.chartText.opened, "1h");
      assert.match(report.chartText.summary, /in the last hour \(only .+ of history/);
      assert.equal(report.chart["1h"].buckets, 60);
      assert.ok(report.chart["1h"].points >= 1, JSON.stringify(report.chart));
      assert.ok(report.chart["1h"].painted > 0, "the series are drawn on the canvas");
      assert.equal(report.chart["24h"].buckets, 288);
      assert.ok(report.chart["24h"].points >= 1 && report.chart["24h"].painted > 0);
      assert.equal(report.chart["7d"].buckets, 168);
      assert.ok(report.chart["7d"].points >= 1 && report.chart["7d"].painted > 0);
      // The axis as drawn: 24-hour UTC times (and the date under the first), never "6pm" or
      // "11/27/26".
      assert.match(
        report.glance.drawnTicks,
        /^\d\d:\d\d\n\d\d-\d\d( \| \d\d:\d\d(\n\d\d-\d\d)?)+$/,
      );
      // The time axis reads as the page does: 24-hour UTC, the date at the first tick and at
      // midnight; days as MM-DD.
      assert.deepEqual(report.chartText.ticks, ["22:00\n11-24", "23:00", "00:00\n11-25", "01:00"]);
      assert.deepEqual(report.chartText.daily, ["11-24", "11-25"]);

      // At a glance: the overview row's last 20 runs as bars and the latest response time; the
      // 7-day column of a minutes-old probe does not repeat the 24-hour figure; at 375 px the
      // bars are on the screen; a heading a page focuses has no ring; the form's extra
      // settings folded.
      assert.equal(report.glance.runs, Array(20).fill("up").join(" "));
      assert.equal(report.glance.runsLabel, "Last 20 runs: 20 up; the latest up");
      assert.match(report.glance.latency, /^\d+ ms$/);
      assert.match(report.glance.week, /^—\s*since (\d\d-\d\d )?\d\d:\d\d$/);
      const bars = report.glance.narrowRuns;
      assert.ok(bars && bars.width >= 100 && bars.x + bars.width <= 375, JSON.stringify(bars));
      assert.deepEqual(report.glance.headingRing, { mouse: "none", keyboard: "none" });
      assert.equal(report.glance.formFolded, true);

      // Assertions made with fields: a refused status beside its field, focus on it; then rows.
      assert.equal(report.assertions.statusError, "Entry 2: must be at most 599");
      assert.equal(report.assertions.focused, "assert-status");
      assert.equal(report.assertions.invalid, "true");
      assert.deepEqual(report.assertions.rows, [
        "Status is 2xx",
        'JSON /status equals "UP"',
        'Header Content-Type contains "json"',
      ]);

      // 375 px: ten result cards at most, paged; a long project label wraps.
      assert.ok(report.mobile.resultCards >= 1 && report.mobile.resultCards <= 10);
      assert.match(report.mobile.pager, /^Results 1–\d+, newest first$/);
      assert.ok(report.mobile.longNameWraps, "the long project label wraps at 375 px");
      console.log(`probe page at 375 px: ${report.mobile.height} px tall`);

      assert.equal(report.created.heading, "Checkout health");
      assert.match(report.created.probeId, /^[0-9a-f]{16}$/);
      assert.equal(report.edited.heading, "Checkout");
      assert.deepEqual(report.toggled, { disabled: true, enabledAgain: true });
      assert.equal(report.deleted.probeNotice, "The probe was deleted.");
      assert.match(report.deleted.projectNotice, new RegExp(`${project}.*deleted`));
      const gone = await restCall(s, KEY, "GET", `/projects/${project}`);
      assert.equal(gone.status, 404);

      for (const [page, { scrollWidth, viewport }] of Object.entries(report.narrow)) {
        assert.ok(scrollWidth <= viewport, `${page} is ${scrollWidth} px wide at ${viewport} px`);
      }
      assert.equal(report.dark.background, "rgb(20, 23, 27)", "the dark scheme is followed");

      assert.equal(report.axePages.length, 11, report.axePages.join(", "));
      assert.deepEqual(report.axe, [], "axe-core: no serious or critical violations");
      assert.deepEqual(report.csp, [], "no Content-Security-Policy violations");
      assert.deepEqual(report.foreign, [], "nothing is loaded from another origin");
      assert.deepEqual(report.pageErrors, []);
      assert.deepEqual(report.consoleErrors, []);
    } finally {
      const stopped: Deno.CommandStatus | undefined = await server?.stop();
      await target?.close();
      await database?.drop();
      await Deno.remove(dataDir, { recursive: true });
      if (stopped) assert.equal(stopped.code, 0, server?.output());
    }
  },
});

Deno.test({
  name: "the overview of 1,000 probes on PostgreSQL is drawn in headless Chromium (time printed)",
  ignore: !adminUrl || skipWithoutChromium("the 1,000-probe overview"),
  async fn() {
    assertChromium();
    const shotDir = await screenshotDir();
    const dataDir = await Deno.makeTempDir({ prefix: "dashboard-1000-" });
    const database = await createPostgresDatabase(adminUrl, "probe_dashboard");
    let server: ServerProcess | undefined;
    try {
      const handle = await openDatabase({ kind: "postgres", url: database.url });
      try {
        await migrateToLatest(handle.db);
        await fill(handle.db, Date.now(), 1000);
      } finally {
        await handle.close();
      }
      // The runner off: the seeded probes point at example.com.
      server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: database.url, RUNNER: "off" });
      const report = await runBrowser<TimingReport>("timing", {
        chromium: CHROMIUM,
        baseUrl: server.url,
        apiKey: KEY,
        shotDir,
      });
      const { drawnMs, apiMs } = report;
      console.log(
        `overview of 1,000 probes fully drawn (headless Chromium, loopback, PostgreSQL), from ` +
          `navigation start: ${drawnMs.cold} ms on a cold load (${apiMs.cold} ms of it the ` +
          `GET /api/v1/overview call), ${drawnMs.warm.join(" / ")} ms reloaded ` +
          `(${apiMs.warm.join(" / ")} ms the call); "${report.summary}"`,
      );
      console.log(`screenshots (in ${shotDir}): ${report.screenshots.join(", ")}`);
      assert.match(report.summary, /^1,000 probes in 20 projects/);
      assert.equal(report.rows, 100, "the first page holds 100 probes");
      assert.match(report.pager, /Page 1 of 10/);
      assert.equal(report.chart.buckets, 90);
      assert.ok(report.chart.points > 80 && report.chart.painted > 0, JSON.stringify(report.chart));
      assert.deepEqual(report.axe, []);
      assert.deepEqual(report.csp, []);
      assert.deepEqual(report.pageErrors, []);
    } finally {
      const stopped: Deno.CommandStatus | undefined = await server?.stop();
      await database.drop();
      await Deno.remove(dataDir, { recursive: true });
      if (stopped) assert.equal(stopped.code, 0, server?.output());
    }
  },
});
