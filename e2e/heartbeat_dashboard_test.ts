/**
 * A new user's heartbeat, set up from the dashboard in a real headless Chromium (driven by
 * e2e/testdata/heartbeat_browser.ts) against the real server as on a fresh clone: a webhook
 * target and the alert policy through their pages, a heartbeat with a 10-second period and a
 * 3-second grace through its form (a 5-second period refused beside the field first), its ping
 * URL copied with its button. A shell loop (curl, every second) pings that URL as a job would: the page
 * shows the heartbeat up. The loop stops: past the deadline the heartbeat is down and exactly one
 * alert reaches the webhook, its cause in words. On PostgreSQL when TEST_DATABASE_URL is set,
 * else embedded.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { uniqueName } from "../server/testing/app.ts";
import type { ServerProcess } from "../server/testing/process.ts";
import { webhookReceiver } from "../server/testing/receivers.ts";
import type { HeartbeatArgs, HeartbeatReport } from "./testdata/heartbeat_browser.ts";
import { runBrowserScript, walkthroughPlaces } from "./testdata/browser_run.ts";

const KEY = "heartbeat-e2e-key-0123456789";
const READ_KEY = "heartbeat-e2e-reader-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/heartbeat_browser.ts", import.meta.url);
const PERIOD_S = 10;
const GRACE_S = 3;

/** What the job sends with each ping: its output, markup included, which the page shows as text. */
const JOB_OUTPUT = '<img src="x" onerror="document.title=1">dumped 3 tables';

/**
 * A job's loop, as cron would run one: a shell (a process of its own) that posts its output to
 * `url` with curl every second until stopped; the statuses it got, one a line.
 */
function pingLoop(url: string) {
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      'while :; do curl -s -o /dev/null -w "%{http_code}\\n" --max-time 5 --data-binary "$BODY" ' +
      '"$URL"; sleep 1; done',
    ],
    env: { URL: url, BODY: JOB_OUTPUT },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const statuses: number[] = [];
  const read = (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop()!;
      statuses.push(...lines.map(Number));
    }
  })();
  let stopping: Promise<void> | undefined;
  return {
    statuses,
    stop: () =>
      stopping ??= (async () => {
        child.kill("SIGTERM");
        await child.status;
        await read;
      })(),
  };
}

Deno.test({
  name: "a new user's heartbeat from the dashboard: pinged from a loop, up; silent, down with " +
    "one alert in words (Chromium)",
  ignore: skipWithoutChromium("a heartbeat from the dashboard"),
  async fn() {
    assertChromium();
    const began = Date.now();
    const places = await walkthroughPlaces("heartbeat");
    const { shotDir } = places;
    const receiver = webhookReceiver([204]);
    let server: ServerProcess | undefined;
    let loop: ReturnType<typeof pingLoop> | undefined;
    try {
      server = await places.start({ SERVICE_API_KEY: KEY, SERVICE_API_KEYS_READONLY: READ_KEY });
      console.log(`server listening ${((Date.now() - began) / 1000).toFixed(1)} s after the start`);
      let stoppedAt = 0;
      let lastPingAt = 0;
      let alertedAt = 0;
      const report = await runBrowserScript<HeartbeatReport>(
        BROWSER_SCRIPT,
        {
          chromium: CHROMIUM,
          baseUrl: server.url,
          apiKey: KEY,
          readKey: READ_KEY,
          project: uniqueName("jobs"),
          heartbeat: "nightly-backup",
          periodSeconds: PERIOD_S,
          graceSeconds: GRACE_S,
          hookUrl: receiver.url,
          shotDir,
        } satisfies HeartbeatArgs,
        {
          answer: async (question) => {
            if (typeof question.ping === "string") {
              loop = pingLoop(question.ping);
              return;
            }
            await loop!.stop();
            stoppedAt = Date.now();
            lastPingAt = stoppedAt - 1_000;
            // Down by the last ping + period + grace; a few seconds more for the watch and delivery.
            const arrived = receiver.arrived(1).then(() => true);
            const late = new Promise<false>((r) =>
              setTimeout(() => r(false), (PERIOD_S + GRACE_S + 8) * 1000)
            );
            assert.ok(await Promise.race([arrived, late]), "no alert after the job fell silent");
            alertedAt = Date.now();
          },
          deadlineMs: 180_000,
        },
      );
      console.log(
        `alert ${((alertedAt - stoppedAt) / 1000).toFixed(1)} s after the loop stopped ` +
          `(period ${PERIOD_S} s + grace ${GRACE_S} s after the last ping)`,
      );
      console.log(`screenshots:\n  ${report.screenshots.join("\n  ")}`);

      // The form refused what the API refuses, beside the field, focused.
      assert.match(report.periodRefused.message, /10/);
      assert.equal(report.periodRefused.focused, "period_seconds");
      // The URL copied is the one shown, under the server's address.
      assert.equal(report.copied, report.shown);
      assert.match(report.copied, new RegExp(`^${server.url}/ping/[A-Za-z0-9_-]{20,}$`));
      assert.ok(loop!.statuses.length >= 2, `pinged ${loop!.statuses.length} times`);
      assert.ok(loop!.statuses.every((s) => s === 200), `answers ${loop!.statuses}`);

      assert.equal(report.up.state, "up");
      assert.match(report.up.facts, /every 10 s, grace 3 s/);
      assert.ok(report.up.pings >= 1);
      assert.deepEqual(report.up.body, { text: JOB_OUTPUT, images: 0 }, "the body as text");
      assert.deepEqual(report.up.snippets, [
        "curl",
        "crontab line",
        "systemd units",
        "Kubernetes CronJob",
      ]);
      assert.match(report.projectRow, /^up nightly-backup every 10 s, grace 3 s /);

      // Exactly one alert, in words; nothing more while it stays down.
      await new Promise((r) => setTimeout(r, 3_000));
      const events = receiver.received.map((c) => JSON.parse(c.body));
      assert.equal(events.length, 1, JSON.stringify(events, null, 1));
      assert.equal(events[0].type, "probe.down");
      assert.equal(events[0].data.label, "nightly-backup");
      assert.match(events[0].data.cause, /no ping/);
      console.log(`alert cause: ${events[0].data.cause}`);
      assert.ok(
        alertedAt - lastPingAt >= (PERIOD_S + GRACE_S - 2) * 1000,
        "not before the deadline",
      );

      assert.equal(report.down.state, "down");
      assert.match(report.overviewRow, /^#\/projects\/jobs-[^/]+\/heartbeats\/nightly-backup$/);
      assert.equal(report.incidentLink, report.overviewRow, "the incident leads to the heartbeat");
      assert.match(report.down.cause, /no ping/);
      assert.deepEqual(report.readOnly, {
        url: `${server.url}/ping/****`,
        copyButtons: 0,
        snippets: 0,
        edit: 0,
      });
      assert.deepEqual(report.axe, [], "axe-core: no serious or critical violations");
      assert.deepEqual([report.csp, report.foreign, report.pageErrors], [[], [], []]);
      console.log(`the whole test took ${((Date.now() - began) / 1000).toFixed(1)} s`);
    } finally {
      await loop?.stop();
      await places.end(server);
      await receiver.close();
    }
  },
});
