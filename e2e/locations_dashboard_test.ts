/**
 * The dashboard's locations page and a probe's view by location in a real headless Chromium,
 * driven by playwright-core in e2e/testdata/locations_browser.ts, against the real server in a
 * subprocess (its built-in runner included):
 *
 * - a write key adds a remote location (its token shown once, gone after a reload), rotates its
 *   token (the old one stops, the new one claims), adds and deletes another;
 * - the location's runs, posted through the runner protocol with the token the page showed, show
 *   as its health (runners, checks per minute, version);
 * - the probe's form sets where it runs (an unknown location refused beside the field), the
 *   project's form its default locations;
 * - the probe page shows the latest result per location and a latency line per location;
 * - a read-only key sees the locations without a control that writes, and no token;
 * - axe-core finds nothing serious or critical; no CSP violation, nothing from another origin.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { cleanEnv, runBrowserScript } from "./testdata/browser_run.ts";
import { uniqueName } from "../server/testing/app.ts";
import {
  isListeningLine,
  restCall,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import { runRemotely } from "../server/testing/remote_runs.ts";
import { startTarget, type Target } from "../server/testing/target_server.ts";
import type { LocationsArgs, LocationsReport } from "./testdata/locations_browser.ts";

const KEY = "locations-e2e-key-0123456789";
const READ_KEY = "locations-e2e-reader-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/locations_browser.ts", import.meta.url);
const BROWSER_DEADLINE_MS = 180_000;

/** The browser run: its questions answered by `answer`; answers its report. */
function runBrowser(
  args: LocationsArgs,
  answer: (question: Record<string, unknown>) => Promise<void>,
): Promise<LocationsReport> {
  return runBrowserScript<LocationsReport>(BROWSER_SCRIPT, args, {
    answer,
    deadlineMs: BROWSER_DEADLINE_MS,
  });
}

Deno.test({
  name: "the dashboard's locations page and a probe by location (headless Chromium)",
  ignore: skipWithoutChromium("the locations page"),
  async fn() {
    assertChromium();
    const shotDir = Deno.env.get("DASHBOARD_SCREENSHOT_DIR") ??
      await Deno.makeTempDir({ prefix: "locations-screenshots-" });
    await Deno.mkdir(shotDir, { recursive: true });
    const dataDir = await Deno.makeTempDir({ prefix: "locations-e2e-" });
    let target: Target | undefined;
    let server: ServerProcess | undefined;
    try {
      target = await startTarget();
      server = await startServerProcess({
        env: cleanEnv({
          SERVICE_API_KEY: KEY,
          SERVICE_API_KEYS_READONLY: READ_KEY,
          DATA_DIR: dataDir,
          PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
          PROBE_INTERVAL_SECONDS: "86400",
        }),
        clearEnv: true,
        output: "capture",
        readyLine: isListeningLine,
      });
      const s = server;
      const location = uniqueName("office");
      const spare = uniqueName("spare");
      // The location is made by the page; the project and the probe naming it come after.
      const project = uniqueName("shop");
      assert.equal((await restCall(s, KEY, "POST", "/projects", { project })).status, 201);
      const home = await restCall(s, KEY, "POST", `/projects/${project}/probes`, {
        url: `${target.origin}/ok`,
        label: "Checkout",
      });
      assert.equal(home.status, 201, JSON.stringify(home.body));
      const probeId: string = home.body.data.probe_id;
      // Over HTTP, as a remote runner would reach the service.
      const overHttp = (request: Request) => {
        const url = new URL(request.url);
        return fetch(`${s.url}${url.pathname}${url.search}`, {
          method: request.method,
          headers: request.headers,
          body: request.body,
        });
      };
      let oldTokenRefused = 0;
      const report = await runBrowser({
        chromium: CHROMIUM,
        baseUrl: s.url,
        apiKey: KEY,
        readKey: READ_KEY,
        location,
        spare,
        project,
        probeId,
        shotDir,
      }, async (question) => {
        const token = String(question.token);
        const old = String(question.old);
        // The page's forms put the probe at both locations, and its project's default at one.
        const proj = await restCall(s, KEY, "GET", `/projects/${project}`);
        assert.deepEqual(proj.body.data.default_locations, [location]);
        const read = await restCall(s, KEY, "GET", `/projects/${project}/probes/${probeId}`);
        assert.deepEqual(read.body.data.locations, ["local", location]);
        assert.equal(
          await runRemotely(overHttp, token, { outcome: "degraded", durationMs: 1234 }),
          1,
        );
        const ran = await restCall(s, KEY, "POST", `/projects/${project}/probes/${probeId}/run`);
        assert.equal(ran.status, 200, JSON.stringify(ran.body));
        // The token the page showed before rotating no longer claims.
        await assert.rejects(() => runRemotely(overHttp, old), /answered 401/);
        oldTokenRefused++;
      });
      console.log(`screenshots (in ${shotDir}): ${report.screenshots.join(", ")}`);

      assert.deepEqual(report.initialRows, ["local"]);
      assert.match(report.added.token, /^plt_[A-Za-z0-9_-]{43}$/);
      assert.match(report.added.rowText, /Office LAN/);
      assert.match(report.rotated.token, /^plt_/);
      assert.notEqual(report.rotated.token, report.added.token);
      assert.equal(report.added.shownAfterReload, false, "a token is shown once");
      // What starts a runner: the token copied, then a command and a systemd unit holding this
      // service's address, the token and the networks typed into the box.
      const setup = report.setup;
      assert.equal(setup.focused, `Location added: the token of ${location}`);
      assert.equal(setup.copied, report.added.token);
      assert.equal(
        setup.command,
        `SERVICE_URL=${s.url} LOCATION_TOKEN=${report.added.token} ` +
          "PROBE_ALLOW_NETWORKS=10.0.0.0/8,192.168.1.0/24 deno task runner:remote",
      );
      assert.equal(
        setup.env,
        `SERVICE_URL=${s.url}\nLOCATION_TOKEN=${report.added.token}\n` +
          "PROBE_ALLOW_NETWORKS=10.0.0.0/8,192.168.1.0/24\n",
      );
      assert.match(setup.unit, new RegExp(`EnvironmentFile=/etc/probe-runner-${location}\\.env`));
      assert.match(setup.unit, /^ExecStart=\/usr\/bin\/deno task runner:remote$/m);
      assert.match(report.deleted.notice, new RegExp(`Location ${spare} was deleted`));
      assert.deepEqual(report.deleted.rows, ["local", location]);
      assert.equal(oldTokenRefused, 1);

      assert.match(report.form.unknownError, /^Entry 2: there is no location named "mars"/);
      assert.equal(report.form.focused, "locations");
      assert.equal(report.form.saved, "The probe was saved.");
      assert.equal(report.form.projectSaved, "Saved.");
      assert.deepEqual(report.health, { runners: "1", checks: "1", version: "test-1" });
      // Each location with its own state (the probe's comes from them by the location quorum).
      assert.equal(report.probe.locationsFact, `local: up · ${location}: degraded`);
      assert.deepEqual(report.probe.rows, {
        local: { outcome: "up", latency: report.probe.rows.local?.latency },
        [location]: { outcome: "degraded", latency: "1.2 s" },
      });
      assert.match(report.probe.rows.local.latency, /^\d+ ms$/);
      assert.equal(report.probe.chartSeries, 2);
      assert.deepEqual(report.probe.legend.slice(1), ["local p95", `${location} p95`]);
      assert.match(report.probe.summary, new RegExp(`${location}: p95 from 1.2 s to 1.2 s`));
      // The chart by location opens as the probe's own, on the hour for a new probe, and its time
      // axis reads 24-hour UTC (it read "6pm / 12am / 11/27/26").
      assert.equal(report.probe.window, "1h");
      assert.match(report.probe.ticks, /^\d\d:\d\d\n\d\d-\d\d( \| \d\d:\d\d(\n\d\d-\d\d)?)+$/);

      assert.deepEqual(report.readOnly.rows, ["local", location]);
      assert.deepEqual(report.readOnly.buttons.filter((b) => b !== "Sign out"), []);
      assert.equal(report.readOnly.forms, 0);
      assert.equal(report.readOnly.tokenShown, false);

      assert.equal(report.axePages.length, 6, report.axePages.join(", "));
      assert.deepEqual(report.axe, [], "axe-core: no serious or critical violations");
      assert.deepEqual(report.csp, []);
      assert.deepEqual(report.foreign, []);
      assert.deepEqual(report.pageErrors, []);
      assert.deepEqual(report.consoleErrors, []);
    } finally {
      const stopped: Deno.CommandStatus | undefined = await server?.stop();
      await target?.close();
      await Deno.remove(dataDir, { recursive: true });
      if (stopped) assert.equal(stopped.code, 0, server?.output());
    }
  },
});
