/**
 * A probe the network policy refuses, on the dashboard's overview in a real headless Chromium
 * (driven by e2e/testdata/blocked_browser.ts), against the real server and its runner: the probe
 * shows as blocked, with the address, why, and the `PROBE_ALLOW_NETWORKS` value that lets it
 * through; its refused runs are no failure in its uptime. A probe that runs beside it is up, 100%.
 * A link opened as soon as the overview shows after signing in is followed, however late the
 * dashboard's effects run.
 * On PostgreSQL when TEST_DATABASE_URL is set, else on the embedded database.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { createPostgresDatabase, uniqueName } from "../server/testing/app.ts";
import {
  isListeningLine,
  restCall,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import { startTarget, type Target } from "../server/testing/target_server.ts";
import type { BlockedArgs, BlockedReport } from "./testdata/blocked_browser.ts";
import { cleanEnv, runBrowserScript } from "./testdata/browser_run.ts";

const KEY = "blocked-e2e-key-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/blocked_browser.ts", import.meta.url);
const adminUrl = Deno.env.get("TEST_DATABASE_URL");

Deno.test({
  name: "the overview shows a probe the network policy refuses as blocked, not down; a link " +
    "opened right after signing in is followed (Chromium)",
  ignore: skipWithoutChromium("the blocked probe on the overview"),
  async fn() {
    assertChromium();
    const shotDir = Deno.env.get("DASHBOARD_SCREENSHOT_DIR") ??
      await Deno.makeTempDir({ prefix: "blocked-screenshots-" });
    await Deno.mkdir(shotDir, { recursive: true });
    const dataDir = await Deno.makeTempDir({ prefix: "blocked-e2e-" });
    const database = adminUrl ? await createPostgresDatabase(adminUrl) : null;
    let target: Target | undefined;
    let server: ServerProcess | undefined;
    try {
      target = await startTarget();
      server = await startServerProcess({
        env: cleanEnv({
          SERVICE_API_KEY: KEY,
          DATA_DIR: dataDir,
          ...(database && { DATABASE_URL: database.url }),
          // The target's address alone: 127.0.0.2, loopback too, stays refused.
          PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
          // Each probe runs once, when it is made.
          PROBE_INTERVAL_SECONDS: "86400",
        }),
        clearEnv: true,
        output: "capture",
        readyLine: isListeningLine,
      });
      const s = server;
      const project = uniqueName("home");
      assert.equal((await restCall(s, KEY, "POST", "/projects", { project })).status, 201);
      for (const [label, url] of [["Router", "http://127.0.0.2:9/"], ["NAS", target.origin]]) {
        const made = await restCall(s, KEY, "POST", `/projects/${project}/probes`, { url, label });
        assert.equal(made.status, 201, JSON.stringify(made.body));
      }
      // Until the runner has run both.
      for (let i = 0;; i++) {
        const { body } = await restCall(s, KEY, "GET", `/overview?project=${project}`);
        const outcomes = body.data.projects[0].probes.map((p: { last_outcome: string }) =>
          p.last_outcome
        ).sort();
        if (outcomes.join() === "blocked,up") break;
        assert.ok(i < 100, `the probes did not run: ${outcomes}`);
        await new Promise((r) => setTimeout(r, 200));
      }

      const report = await runBrowserScript<BlockedReport>(
        BROWSER_SCRIPT,
        {
          chromium: CHROMIUM,
          baseUrl: s.url,
          apiKey: KEY,
          blocked: "Router",
          running: "NAS",
          shotDir,
        } satisfies BlockedArgs,
      );
      console.log(`screenshot: ${report.screenshot}`);
      assert.equal(report.blocked.badge, "blocked");
      assert.match(report.blocked.state, /refuses 127\.0\.0\.2 \(loopback\)/);
      assert.match(report.blocked.state, /PROBE_ALLOW_NETWORKS=127\.0\.0\.2/);
      assert.ok(
        report.blocked.uptime.every((u) => !u.includes("%")),
        `no uptime from refused runs: ${report.blocked.uptime}`,
      );
      assert.equal(report.running.badge, "up");
      assert.match(report.running.uptime[0], /^100%/);
      assert.deepEqual(report.axe, [], "axe-core: no serious or critical violations");
      assert.deepEqual([report.csp, report.foreign, report.pageErrors], [[], [], []]);
      assert.equal(target.hits.length, 1, "only the allowed probe reached its target");
      assert.equal(
        report.linkedRightAway,
        "Incidents",
        "a link opened right after signing in shows its page",
      );
    } finally {
      const stopped: Deno.CommandStatus | undefined = await server?.stop();
      await target?.close();
      await database?.drop();
      await Deno.remove(dataDir, { recursive: true });
      if (stopped) assert.equal(stopped.code, 0, server?.output());
    }
  },
});
