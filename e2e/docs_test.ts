// The reference page at /docs in a real headless Chromium (Debian's `chromium`, which .ci/run
// installs), driven by playwright-core in server/testdata/docs_browser.ts: it must list every
// endpoint, refuse a call without a key, and a call made with the key entered must succeed.
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import type { DocsReport } from "./testdata/docs_browser.ts";
import { uniqueName } from "../server/testing/app.ts";
import { startLiveServer } from "../server/testing/live.ts";

Deno.test({
  name: "/docs lists every endpoint and calls made from it succeed (headless Chromium)",
  ignore: skipWithoutChromium("/docs"),
  async fn() {
    assertChromium();
    const server = await startLiveServer();
    // Screenshots for whoever debugs this test: DOCS_SCREENSHOT_DIR, or a temp dir.
    const shotDir = Deno.env.get("DOCS_SCREENSHOT_DIR") ??
      await Deno.makeTempDir({ prefix: "docs-screenshots-" });
    await Deno.mkdir(shotDir, { recursive: true });
    try {
      const project = uniqueName("docs");
      const output = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-all",
          "--config",
          new URL("../deno.dev.json", import.meta.url).pathname,
          new URL("./testdata/docs_browser.ts", import.meta.url).pathname,
          CHROMIUM,
          server.url,
          server.apiKey,
          project,
          shotDir,
        ],
        stdin: "null",
      }).output();
      const stderr = new TextDecoder().decode(output.stderr);
      assert.ok(output.success, `the browser run failed:\n${stderr}`);
      const report: DocsReport = JSON.parse(new TextDecoder().decode(output.stdout));
      console.log(`screenshots: ${report.screenshots.join(", ")}`);

      const doc = await (await fetch(`${server.url}/api/v1/openapi.json`)).json();
      // The page lists the operations and, after them, the webhooks the service calls (by name).
      const documented = [...Object.entries(doc.paths), ...Object.entries(doc.webhooks ?? {})]
        .flatMap(([path, item]) =>
          Object.keys(item as object).map((m) => `${m.toUpperCase()} ${path}`)
        );
      assert.deepEqual(report.listed.toSorted(), documented.toSorted());

      assert.equal(report.withoutKey, "401", "a call without the key is refused");
      assert.equal(report.created.status, "201");
      assert.deepEqual(JSON.parse(report.created.body), { data: { project } });

      // The project really is there.
      const check = await fetch(`${server.url}/api/v1/projects/${project}`, {
        headers: { "x-service-api-key": server.apiKey },
      });
      assert.equal(check.status, 200);
      await check.body?.cancel();

      assert.deepEqual(report.foreign, [], "the page loads nothing from other hosts");
      assert.deepEqual(report.pageErrors, []);
    } finally {
      await server.close();
    }
  },
});
