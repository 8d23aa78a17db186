/**
 * A new user's TCP and DNS probes, set up from the dashboard in a real headless Chromium (driven
 * by e2e/testdata/kinds_browser.ts) against the real server and its runner, as on a fresh clone
 * with `PROBE_ALLOW_NETWORKS=127.0.0.0/8`: a webhook target and the alert policy through their
 * pages, a TCP probe of a local listener (its forgotten port refused beside the field) and a DNS
 * probe of a local responder through the probe form; both up, each shown with its kind and what
 * it measures. Then the listener and the responder stop: exactly one alert each reaches the
 * webhook, its cause in words. On PostgreSQL when TEST_DATABASE_URL is set, else embedded.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { uniqueName } from "../server/testing/app.ts";
import type { ServerProcess } from "../server/testing/process.ts";
import { type DnsResponder, startDnsResponder } from "../server/testing/dns_responder.ts";
import { webhookReceiver } from "../server/testing/receivers.ts";
import type { KindsArgs, KindsReport } from "./testdata/kinds_browser.ts";
import { runBrowserScript, walkthroughPlaces } from "./testdata/browser_run.ts";

const KEY = "kinds-e2e-key-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/kinds_browser.ts", import.meta.url);
/** The probes' interval: a stopped listener is found within it. */
const INTERVAL_S = 10;

/** A TCP listener on loopback that accepts connections and closes them. */
function tcpListener() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    for await (const conn of listener) conn.close();
  })();
  return {
    port: listener.addr.port,
    close: async () => {
      try {
        listener.close();
      } catch {
        // Closed already.
      }
      await accepting.catch(() => {});
    },
  };
}

Deno.test({
  name: "a new user's TCP and DNS probes from the dashboard: up, then one alert each in words " +
    "(Chromium)",
  ignore: skipWithoutChromium("TCP and DNS probes from the dashboard"),
  async fn() {
    assertChromium();
    const began = Date.now();
    const places = await walkthroughPlaces("kinds");
    const { shotDir } = places;
    const listener = tcpListener();
    const receiver = webhookReceiver([204]);
    let dns: DnsResponder | undefined;
    let server: ServerProcess | undefined;
    try {
      dns = await startDnsResponder();
      const responder = dns;
      server = await places.start({
        SERVICE_API_KEY: KEY,
        PROBE_INTERVAL_SECONDS: String(INTERVAL_S),
        PROBE_TIMEOUT_MS: "2000",
      });
      console.log(`server listening ${((Date.now() - began) / 1000).toFixed(1)} s after the start`);
      let stoppedAt = 0;
      const report = await runBrowserScript<KindsReport>(
        BROWSER_SCRIPT,
        {
          chromium: CHROMIUM,
          baseUrl: server.url,
          apiKey: KEY,
          project: uniqueName("home"),
          tcpPort: listener.port,
          dnsPort: responder.port,
          hookUrl: receiver.url,
          shotDir,
        } satisfies KindsArgs,
        {
          answer: async () => {
            await listener.close();
            dns = undefined;
            await responder.close();
            stoppedAt = Date.now();
            // One down alert each, within two of their intervals.
            const arrived = receiver.arrived(2).then(() => true);
            const late = new Promise<false>((r) =>
              setTimeout(() => r(false), 2 * INTERVAL_S * 1000)
            );
            assert.ok(await Promise.race([arrived, late]), "no alert for both probes");
          },
          deadlineMs: 120_000,
        },
      );
      console.log(`alerts ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s after the stop`);
      console.log(`screenshots:\n  ${report.screenshots.join("\n  ")}`);
      await Deno.writeTextFile(`${shotDir}/kinds-report.json`, JSON.stringify(report, null, 1));

      // The form: each kind's fields, and the API's refusal beside the port.
      assert.deepEqual(report.portRefused, {
        message: "Must name a port (host:port)",
        focused: "port",
      });
      for (const label of ["Host", "Port", "Send (optional)", "Answer must contain"]) {
        assert.ok(report.tcpFields.includes(label), `TCP form lacks ${label}`);
      }
      for (const label of ["Resolver", "Port (optional)", "Name to look up", "Record type"]) {
        assert.ok(report.dnsFields.includes(label), `DNS form lacks ${label}`);
      }
      for (const fields of [report.tcpFields, report.dnsFields]) {
        for (const http of ["URL", "Method", "Headers (optional)", "Status codes and classes"]) {
          assert.ok(!fields.includes(http), `${http} shown for another kind: ${fields}`);
        }
      }
      assert.ok(!report.dnsFields.includes("Send (optional)"));

      // The probe pages: the kind, what it watches and measures, no HTTP column.
      assert.match(report.tcpPage.watches, /^TCP\s+tcp:\/\/127\.0\.0\.1:\d+$/);
      assert.match(report.tcpPage.facts, /Expected connect time/);
      assert.doesNotMatch(report.tcpPage.facts, /GET|Request/);
      assert.equal(report.tcpPage.assertions, "an accepted connection passes (the default)");
      assert.ok(!report.tcpPage.headers.includes("HTTP"), `${report.tcpPage.headers}`);
      assert.ok(report.tcpPage.headers.includes("Connect time"), `${report.tcpPage.headers}`);
      assert.match(report.tcpPage.ran, /^Ran now: up in \d+ ms\.$/);
      assert.match(report.tcpEdit.kind, /^Kind: TCP/);
      assert.deepEqual(
        [report.tcpEdit.host, report.tcpEdit.port, report.tcpEdit.radios],
        ["127.0.0.1", String(listener.port), 0],
      );
      assert.match(
        report.dnsPage.watches,
        /^DNS\s+dns:\/\/127\.0\.0\.1:\d+\/example\.test\?type=A$/,
      );
      assert.equal(report.dnsPage.assertions, 'A record equals "192.0.2.1"');
      assert.match(report.dnsPage.ran, /^Ran now: up in \d+ ms\.$/);
      assert.deepEqual(report.overview, [
        { name: "Cache", state: "up", tag: "TCP" },
        { name: "Zone", state: "up", tag: "DNS" },
      ]);

      // Exactly one alert each, in words; nothing more once both are down.
      await new Promise((r) => setTimeout(r, 3_000));
      const events = receiver.received.map((c) => JSON.parse(c.body));
      assert.equal(events.length, 2, JSON.stringify(events, null, 1));
      const byLabel = Object.fromEntries(events.map((e) => [e.data.label, e]));
      assert.equal(byLabel.Cache?.type, "probe.down");
      assert.equal(byLabel.Cache.data.cause, "connection refused");
      assert.equal(byLabel.Zone?.type, "probe.down");
      assert.match(byLabel.Zone.data.cause, /resolver|no answer/);
      assert.equal(byLabel.Zone.data.http_status, null);
      console.log(`alert causes: ${byLabel.Cache.data.cause}; ${byLabel.Zone.data.cause}`);

      assert.equal(report.tcpDown.state, "down");
      assert.match(report.tcpDown.error, /connection refused/);
      assert.deepEqual(report.axe, [], "axe-core: no serious or critical violations");
      assert.deepEqual([report.csp, report.foreign, report.pageErrors], [[], [], []]);
      console.log(`the whole test took ${((Date.now() - began) / 1000).toFixed(1)} s`);
    } finally {
      await places.end(server);
      await listener.close();
      await dns?.close().catch(() => {});
      await receiver.close();
    }
  },
});
