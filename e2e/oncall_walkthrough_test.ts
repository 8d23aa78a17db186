/**
 * A new user pages their on-call people, as on a fresh clone: the service started as
 * `deno task start` runs it (`PROBE_ALLOW_NETWORKS=127.0.0.0/8`), a PagerDuty-shaped and a
 * Telegram-shaped receiver on loopback (each target's base URL pointed there), set up through the
 * typed client:
 *
 * - the policy pages PagerDuty, says down after one failed run, watches flapping (more than 2
 *   changes in a minute) and escalates to Telegram after one minute (the least it allows);
 * - two probes of failing targets open incidents, PagerDuty triggered for each; one is
 *   acknowledged (PagerDuty told so): a minute later Telegram gets the escalation step of the
 *   other alone, saying so in words, and nothing for the acknowledged one;
 * - a target that flips between 200 and 500 at each run: its first changes page and resolve, then
 *   it is flapping, one notification says so, and its further flips page no one.
 *
 * On PostgreSQL when TEST_DATABASE_URL is set, else embedded. Over a minute: the escalation's
 * minute is the least a policy takes.
 */
import assert from "node:assert/strict";
import { createProbeClient, type Probe } from "@probe/client";
import { uniqueName } from "../server/testing/app.ts";
import type { ServerProcess } from "../server/testing/process.ts";
import { type VendorCall, vendorReceiver } from "../server/testing/vendor_receiver.ts";
import { walkthroughPlaces } from "./testdata/browser_run.ts";

const KEY = "oncall-e2e-key-0123456789";
const ROUTING_KEY = "R0123456789abcdef0123456789abcde";
const BOT_TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";

/** A loopback HTTP target: always 500, or (flipping) 200 and 500 by turns, starting with 500. */
function target() {
  let answers = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const flipping = new URL(req.url).pathname === "/flaky";
    const status = flipping && answers++ % 2 === 1 ? 200 : 500;
    return new Response(null, { status });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

/**
 * What PagerDuty was sent, as `action words label` (`trigger DOWN Checkout`, `resolve Flaky`):
 * a resolve or an acknowledge carries no summary, only its incident's key, which names the probe.
 */
function pages(calls: VendorCall[], labels: Record<string, string>): string[] {
  return calls.map((c) => JSON.parse(c.body)).map((e) => {
    const summary = e.payload?.summary as string | undefined;
    const said = summary
      ? summary.replace(/^(\w+)(?: \([^)]*\))? [^:]+: /, "$1 ")
      : labels[String(e.dedup_key).split(":")[2]] ?? e.dedup_key;
    return `${e.event_action} ${said}`;
  });
}

/** Waits until `check` holds, polling every 200 ms, for at most `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!await check()) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

Deno.test(
  "a new user's on-call: PagerDuty and Telegram on loopback, escalation after a minute " +
    "unless acknowledged, one notification for a flapping probe",
  async () => {
    const began = Date.now();
    const places = await walkthroughPlaces("oncall", { screenshots: false });
    const pagerduty = vendorReceiver([{ status: 202, body: { status: "success" } }]);
    const telegram = vendorReceiver([{
      status: 200,
      body: { ok: true, result: { message_id: 1 } },
    }]);
    const site = target();
    let server: ServerProcess | undefined;
    try {
      // Each probe runs when created, then only when run now: the test sets the pace.
      server = await places.start({ SERVICE_API_KEY: KEY, PROBE_INTERVAL_SECONDS: "86400" });
      const client = createProbeClient({ baseUrl: server.url, apiKey: KEY });
      await client.targets.create({
        name: "pager",
        kind: "pagerduty",
        routing_key: ROUTING_KEY,
        url: pagerduty.url,
      });
      await client.targets.create({
        name: "phones",
        kind: "telegram",
        bot_token: BOT_TOKEN,
        chat_id: "-1001234567890",
        url: telegram.url,
      });
      // The least delay a step takes is a minute: refused below it.
      const tooSoon = await client.alerts.update({
        escalation: [{ after_minutes: 0, targets: ["phones"] }],
      }).catch((error) => error);
      assert.equal(tooSoon.status, 422);
      await client.alerts.update({
        targets: ["pager"],
        failure_threshold: 1,
        success_threshold: 1,
        flap_changes: 2,
        flap_minutes: 1,
        escalation: [{ after_minutes: 1, targets: ["phones"] }],
      });

      const project = uniqueName("shop");
      await client.projects.create({ project });
      const make = async (path: string, label: string) =>
        (await client.probes.create({ project, url: `${site.url}${path}`, label })).data.probe_id;
      const checkout = await make("/checkout", "Checkout");
      const search = await make("/search", "Search");
      const labels: Record<string, string> = { [checkout]: "Checkout", [search]: "Search" };
      const paged = () => pages(pagerduty.received, labels);
      await until(() => pagerduty.received.length >= 2, 20_000, "PagerDuty triggered twice");
      const opened = Date.now();
      const incidents = (await client.incidents.list({ project, state: "open" })).data;
      const searchIncident = incidents.find((i) => i.probe_id === search)!;
      assert.ok(incidents.some((i) => i.probe_id === checkout), JSON.stringify(incidents));
      await client.incidents.acknowledge({ id: searchIncident.id });
      await until(() => pagerduty.received.length >= 3, 10_000, "PagerDuty told of the ack");
      assert.deepEqual(paged().sort(), [
        "acknowledge Search",
        "trigger DOWN Checkout",
        "trigger DOWN Search",
      ]);
      const [firstPage] = pagerduty.received.map((c) => JSON.parse(c.body));
      assert.equal(firstPage.routing_key, ROUTING_KEY);
      assert.equal(telegram.received.length, 0, "Telegram only at the escalation step");

      // The flipping target, driven by run-now: changes page until it is flapping.
      const flaky = await make("/flaky", "Flaky");
      labels[flaky] = "Flaky";
      const flakyState = async () =>
        (await client.probes.get({ project, probeId: flaky })).data as Probe;
      await until(async () => (await flakyState()).state === "down", 10_000, "Flaky down");
      let runs = 0;
      while (!(await flakyState()).flapping) {
        assert.ok(++runs <= 8, "not flapping after 8 flips");
        await client.probes.run({ project, probeId: flaky });
      }
      await until(
        () => paged().includes("trigger FLAPPING Flaky"),
        10_000,
        "the flapping notification",
      );
      const beforeQuiet = pagerduty.received.length;
      for (let i = 0; i < 4; i++) await client.probes.run({ project, probeId: flaky });
      await new Promise((r) => setTimeout(r, 2_000));
      const flakyPages = paged().filter((p) => p.endsWith("Flaky"));
      console.log(`Flaky paged: ${JSON.stringify(flakyPages)} over ${runs} flips`);
      assert.equal(pagerduty.received.length, beforeQuiet, "flips while flapping page no one");
      assert.equal(flakyPages.filter((p) => p.includes("FLAPPING")).length, 1, "said once");
      assert.equal(flakyPages[0], "trigger DOWN Flaky", "its first change pages as any would");

      // The escalation step: a minute after the incidents opened, the unacknowledged one alone.
      await until(() => telegram.received.length >= 1, 75_000, "the escalation step");
      const stepAfter = (Date.now() - opened) / 1000;
      await new Promise((r) => setTimeout(r, 3_000));
      assert.equal(telegram.received.length, 1, "no step for the acknowledged incident");
      const call = telegram.received[0];
      assert.equal(call.path, `/bot${BOT_TOKEN}/sendMessage`);
      const text: string = JSON.parse(call.body).text;
      console.log(`Telegram ${stepAfter.toFixed(1)} s after the incidents opened:\n${text}`);
      assert.match(text, /DOWN \(escalation step 1\) [^:]+: Checkout/);
      assert.match(text, /step 1, still down after 1 min and not acknowledged/);
      assert.doesNotMatch(text, /Search/);
      assert.ok(stepAfter >= 55, `the step came ${stepAfter} s after`);
      console.log(`the whole test took ${((Date.now() - began) / 1000).toFixed(1)} s`);
    } finally {
      await places.end(server);
      await site.close();
      await pagerduty.close();
      await telegram.close();
    }
  },
);
