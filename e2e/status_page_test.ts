/**
 * A public status page as a visitor sees it, in headless Chromium with JavaScript off and on
 * (new figures in place, no reload), and its badges, from a real server whose runner has run the probes against a local target.
 * Screenshots go to STATUS_SCREENSHOT_DIR or a temporary folder.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { restCall, startServerProcess } from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";

const KEY = "status-e2e-key-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/status_page_browser.ts", import.meta.url).pathname;

Deno.test({
  name: "a public status page works without JavaScript, and its badges are SVG with their text",
  ignore: skipWithoutChromium("the status page"),
  fn: async () => {
    assertChromium();
    const target = await startTarget();
    const dataDir = await Deno.makeTempDir({ prefix: "status-e2e-" });
    const server = await startServerProcess({
      // Runs only when asked, so the page's figures change when the test says.
      env: {
        DATA_DIR: dataDir,
        SERVICE_API_KEY: KEY,
        PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
        RUNNER: "off",
      },
    });
    const call = (method: string, path: string, body?: unknown) =>
      restCall(server, KEY, method, path, body);
    try {
      assert.equal((await call("POST", "/projects", { project: "shop" })).status, 201);
      const probe = await call("POST", "/projects/shop/probes", {
        url: `${target.origin}/health?secret-query=1`,
        label: "Checkout",
      });
      const run = await call("POST", `/projects/shop/probes/${probe.body.data.probe_id}/run`);
      assert.equal(run.body.data.outcome, "up");
      const hidden = await fetch(`${server.url}/status/shop`);
      assert.equal(hidden.status, 404, "a project's page is private until made public");
      await hidden.body?.cancel();
      await call("PATCH", "/projects/shop/status-page", { public: true, title: "Shop status" });
      // The next run fails: the page open in the browser must show it without a reload.
      target.setHealth(500, { status: "DOWN" });

      const shotDir = Deno.env.get("STATUS_SCREENSHOT_DIR") ??
        await Deno.makeTempDir({ prefix: "status-screenshots-" });
      await Deno.mkdir(shotDir, { recursive: true });
      const output = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-all",
          "--config",
          new URL("../deno.dev.json", import.meta.url).pathname,
          BROWSER_SCRIPT,
          CHROMIUM,
          `${server.url}/status/shop`,
          shotDir,
          `${server.url}/api/v1/projects/shop/probes/${probe.body.data.probe_id}/run`,
          KEY,
        ],
        stdin: "null",
      }).output();
      const stderr = new TextDecoder().decode(output.stderr);
      assert.ok(output.success, `the browser run failed:\n${stderr}`);
      const seen = JSON.parse(new TextDecoder().decode(output.stdout).trim().split("\n").at(-1)!);
      console.log(`screenshots: ${seen.screenshots.join(", ")}`);
      assert.equal(seen.status, 200);
      assert.equal(seen.scripts, 1, "one script, live.js (not run with JavaScript off)");
      assert.equal(seen.refreshes, 0, "no timed reload");
      // With JavaScript: the run's new figures in place, the page never navigated again.
      assert.match(seen.stateBefore, /Checkout\s+Operational[^]*, 100% up over 1 runs/);
      assert.match(seen.stateAfter, /Checkout\s+(Operational|Down)[^]*, 50\.00% up over 2 runs/);
      assert.doesNotMatch(seen.stateAfter, /, 100% up/, "the failed run is in today's bar");
      assert.equal(seen.stayed, true, "the page was not reloaded");
      assert.equal(seen.navigations, 1);
      assert.ok(!seen.findings.some((f: { id: string }) => f.id === "meta-refresh"));
      // One location (local): its name is not on the page unless the settings show locations.
      assert.doesNotMatch(seen.text, /local/);
      assert.match(seen.text, /Shop status/);
      assert.match(seen.text, /Checkout/);
      assert.doesNotMatch(seen.text, /127\.0\.0\.1|secret-query/, "no URL or address shown");
      assert.equal(seen.overflow, false, "nothing scrolls sideways at 375 px");
      assert.deepEqual(seen.consoleErrors, [], "no CSP or other errors");
      assert.deepEqual(seen.blocking, [], "axe: no serious or critical violations");

      const json = await (await fetch(`${server.url}/status/shop/status.json`)).json();
      assert.equal(JSON.stringify(json).includes("127.0.0.1"), false);

      target.setHealth(200, { status: "UP" });
      await call("POST", `/projects/shop/probes/${probe.body.data.probe_id}/run`);
      const made = await call("POST", "/projects/shop/badges", {});
      const token = made.body.data.token;
      const badge = await fetch(`${server.url}/badge/${token}/status.svg`);
      assert.equal(badge.status, 200);
      assert.match(badge.headers.get("content-type") ?? "", /^image\/svg\+xml/);
      assert.equal(badge.headers.get("cache-control"), "public, max-age=30");
      const svg = await badge.text();
      assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      assert.match(svg, />up</);
      const shields = await (await fetch(`${server.url}/badge/${token}.json`)).json();
      assert.equal(shields.schemaVersion, 1);
      assert.equal(shields.message, "up");
    } finally {
      await server.stop();
      await target.close();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
