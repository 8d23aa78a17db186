/**
 * Single sign-on in a real headless Chromium (driven by e2e/testdata/oidc_browser.ts) against the
 * real server (`server/main.ts` in a subprocess, with `OIDC_*` set) and a real OpenID provider
 * (`oidc-provider` on loopback, started here): "Sign in with …" on the sign-in page, the
 * provider's own login and consent pages, back to the dashboard signed in with the role the
 * groups claim maps to (its name and role in the user menu, the session's cookie out of the
 * page's reach), sign out (the session no longer reads the API); a user whose groups map to no
 * role is refused with the reason. On PostgreSQL when TEST_DATABASE_URL is set, else embedded.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { cleanEnv, runBrowserScript } from "./testdata/browser_run.ts";
import { createPostgresDatabase } from "../server/testing/app.ts";
import { sparePort } from "../server/testing/cluster.ts";
import { startOidcProvider } from "../server/testing/oidc_provider.ts";
import {
  isListeningLine,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import type { OidcArgs, OidcReport } from "./testdata/oidc_browser.ts";

const KEY = "oidc-e2e-key-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/oidc_browser.ts", import.meta.url);
const adminUrl = Deno.env.get("TEST_DATABASE_URL");

Deno.test({
  name: "single sign-on through a real OpenID provider: role from the groups claim, sign out " +
    "(headless Chromium)",
  ignore: skipWithoutChromium("single sign-on in the dashboard"),
  async fn() {
    assertChromium();
    const shotDir = Deno.env.get("DASHBOARD_SCREENSHOT_DIR") ??
      await Deno.makeTempDir({ prefix: "oidc-screenshots-" });
    await Deno.mkdir(shotDir, { recursive: true });
    const dataDir = await Deno.makeTempDir({ prefix: "oidc-e2e-" });
    const database = adminUrl ? await createPostgresDatabase(adminUrl) : null;
    const port = sparePort();
    const provider = await startOidcProvider({
      redirectUri: `http://127.0.0.1:${port}/auth/oidc/callback`,
      groups: { dana: ["staff", "monitor-editors"], erin: ["staff"] },
    });
    let server: ServerProcess | undefined;
    try {
      server = await startServerProcess({
        env: cleanEnv({
          PORT: String(port),
          SERVICE_API_KEY: KEY,
          DATA_DIR: dataDir,
          RUNNER: "off",
          ...(database && { DATABASE_URL: database.url }),
          OIDC_ISSUER: provider.issuer,
          OIDC_CLIENT_ID: provider.clientId,
          OIDC_CLIENT_SECRET: provider.clientSecret,
          OIDC_NAME: "Example IdP",
          OIDC_SCOPES: "openid email groups",
          OIDC_ADMIN_GROUPS: "monitor-admins",
          OIDC_EDITOR_GROUPS: "monitor-editors",
        }),
        clearEnv: true,
        output: "capture",
        readyLine: isListeningLine,
      });
      const report = await runBrowserScript<OidcReport>(
        BROWSER_SCRIPT,
        {
          chromium: CHROMIUM,
          baseUrl: server.url,
          providerName: "Example IdP",
          user: "dana",
          unmapped: "erin",
          shotDir,
        } satisfies OidcArgs,
      );
      console.log(`screenshots: ${report.screenshots.join(", ")}`);
      assert.equal(report.button, "Sign in with Example IdP");
      assert.deepEqual(report.signedIn, {
        name: "dana@example.com",
        role: "editor",
        canCreate: true,
        cookies: "",
      });
      assert.deepEqual(report.signedOut, { signInShown: true, apiStatus: 401 });
      assert.deepEqual(report.refused, {
        heading: "Sign-in refused",
        reason: "Your account has no role here: ask an admin for one",
        apiStatus: 401,
      });
      assert.deepEqual(report.axe, [], "axe-core: no serious or critical violations");
      assert.deepEqual([report.csp, report.foreign, report.pageErrors], [[], [], []]);
      // The server logged no secret of the flow.
      const output = server.output();
      assert.ok(!output.includes(provider.clientSecret), "the client secret is never logged");
      assert.ok(!/pds_[\w-]{20}/.test(output), "no session token in the log");
    } finally {
      const stopped: Deno.CommandStatus | undefined = await server?.stop();
      await provider.close();
      await database?.drop();
      await Deno.remove(dataDir, { recursive: true });
      if (stopped) assert.equal(stopped.code, 0, server?.output());
    }
  },
});
