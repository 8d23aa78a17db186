/**
 * The dashboard's escalation, flapping and dependency screens in a real headless Chromium
 * (driven by e2e/testdata/oncall_screens_browser.ts) against the real server and its runner, as
 * on a fresh clone with `PROBE_ALLOW_NETWORKS=127.0.0.0/8`:
 *
 * - the alert policy's form: an escalation step of 0 minutes refused beside its field, then a
 *   step after a minute and flapping past 2 changes in 5 minutes saved, read back over REST and
 *   shown in words in the policy's facts;
 * - the probe form's Depends on: an app depending on a database, read back over REST; the
 *   database down, the app's incident opens suppressed and its page says so;
 * - a target flipping between 500 and 200 at each run-now: the probe's page and the overview
 *   show it flapping, and the REST read says so.
 *
 * On PostgreSQL when TEST_DATABASE_URL is set, else embedded.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { uniqueName } from "../server/testing/app.ts";
import { restCall, type ServerProcess } from "../server/testing/process.ts";
import { webhookReceiver } from "../server/testing/receivers.ts";
import type { OncallArgs, OncallReport } from "./testdata/oncall_screens_browser.ts";
import { runBrowserScript, walkthroughPlaces } from "./testdata/browser_run.ts";

const KEY = "oncall-screens-key-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/oncall_screens_browser.ts", import.meta.url);

/** A loopback site: `/flaky` answers 500 and 200 by turns, anything else 500. */
function site() {
  let flips = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const up = new URL(req.url).pathname === "/flaky" && flips++ % 2 === 1;
    return new Response(null, { status: up ? 200 : 500 });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test({
  name: "the dashboard's escalation, flapping and dependency screens: set, saved through the " +
    "API, their effect shown (Chromium)",
  ignore: skipWithoutChromium("the escalation, flapping and dependency screens"),
  async fn() {
    assertChromium();
    const began = Date.now();
    const places = await walkthroughPlaces("oncall-screens");
    const receiver = webhookReceiver([204]);
    const target = site();
    let server: ServerProcess | undefined;
    try {
      // Each probe runs when created, then only when run now: the browser sets the pace.
      server = await places.start({ SERVICE_API_KEY: KEY, PROBE_INTERVAL_SECONDS: "86400" });
      const project = uniqueName("shop");
      const r = await runBrowserScript<OncallReport>(
        BROWSER_SCRIPT,
        {
          chromium: CHROMIUM,
          baseUrl: server.url,
          apiKey: KEY,
          project,
          hookUrl: receiver.url,
          siteUrl: target.url,
          shotDir: places.shotDir,
        } satisfies OncallArgs,
        { deadlineMs: 150_000 },
      );
      console.log(`screenshots:\n  ${r.screenshots.join("\n  ")}`);
      const rest = async (path: string) => (await restCall(server!, KEY, "GET", path)).body.data;

      // Escalation and flapping: refused at 0 minutes, saved, read back, said in words.
      assert.match(r.escalationRefused, /1/, r.escalationRefused);
      const policy = await rest("/settings/alerts");
      assert.deepEqual(policy.escalation, [{ after_minutes: 1, targets: ["ops-hook"] }]);
      assert.deepEqual([policy.flap_changes, policy.flap_minutes], [2, 5]);
      assert.deepEqual(r.policyFacts, {
        escalation: "after 1 min: ops-hook",
        flapChanges: "2",
        flapMinutes: "5",
      });

      // The dependency: saved, and the app's incident suppressed while the database is down.
      const app = await rest(`/projects/${project}/probes/${r.ids.app}`);
      assert.deepEqual(app.depends_on, [r.ids.db]);
      assert.equal(r.app.dependsOn, r.ids.db);
      assert.match(r.app.incident, /suppressed: Database is down/);
      const [incident] = await rest(`/incidents?project=${project}&probe_id=${r.ids.app}`);
      assert.equal(incident.suppressed, "suppressed: Database is down");

      // Flapping: shown on its page and the overview, as the API reads it.
      const flaky = await rest(`/projects/${project}/probes/${r.ids.flaky}`);
      assert.equal(flaky.flapping, true, `after ${r.flaky.runs} run-nows`);
      assert.ok(r.flaky.badges.includes("flapping"), `${r.flaky.badges}`);
      assert.match(r.flaky.state, /flapping: alerts wait until it is stable/);
      assert.ok(r.overviewFlaky.includes("flapping"), `${r.overviewFlaky}`);
      // The webhook was told of the database and of the flapping, never of the suppressed app.
      const events = receiver.received.map((c) => JSON.parse(c.body));
      const told = events.map((e) => `${e.type} ${e.data.label}`);
      assert.ok(told.includes("probe.down Database"), `${told}`);
      assert.ok(told.includes("probe.flapping Flaky"), `${told}`);
      assert.ok(!told.some((t) => t.endsWith(" App")), `${told}`);

      assert.deepEqual(r.axe, [], "axe-core: no serious or critical violations");
      assert.deepEqual([r.csp, r.foreign, r.pageErrors], [[], [], []]);
      console.log(`the whole test took ${((Date.now() - began) / 1000).toFixed(1)} s`);
    } finally {
      await places.end(server);
      await receiver.close();
      await target.close();
    }
  },
});
