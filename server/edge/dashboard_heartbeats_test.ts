/**
 * The dashboard's heartbeat pieces that need no browser: their places (`routes.js`), the
 * snippets a heartbeat's page offers (`heartbeat_snippets.js`), its runs paired from its pings
 * (`heartbeat_runs.js`) and what its form sends (`heartbeat_form.js`).
 */
import assert from "node:assert/strict";
import { href, parseRoute } from "../ui/routes.js";
import { cronOf, snippets, unitName } from "../ui/heartbeat_snippets.js";
import { runsOf, runsSummary } from "../ui/heartbeat_runs.js";
import { timingBody } from "../ui/heartbeat_form.js";
import { deadlineWords, heartbeatOfUrl, runWords, timingWords } from "../ui/heartbeats.js";

Deno.test("a heartbeat's pages have places of their own, and each href leads back", () => {
  assert.deepEqual(parseRoute(href.newHeartbeat("shop")), {
    name: "newHeartbeat",
    project: "shop",
  });
  assert.deepEqual(parseRoute(href.heartbeat("shop", "nightly.backup")), {
    name: "heartbeat",
    project: "shop",
    heartbeat: "nightly.backup",
  });
  assert.deepEqual(parseRoute(href.editHeartbeat("a-b", "x")), {
    name: "editHeartbeat",
    project: "a-b",
    heartbeat: "x",
  });
  for (const hash of ["#/projects/shop/heartbeats", "#/projects/shop/heartbeats/x/y"]) {
    assert.deepEqual(parseRoute(hash), { name: "notFound" }, hash);
  }
});

const ping = "https://probes.example.com/ping/tok_123";

Deno.test("the snippets ping the heartbeat's URL with its schedule and time zone", () => {
  const scheduled = snippets({
    name: "Nightly Backup",
    ping_url: ping,
    schedule: "30 2 * * *",
    period_seconds: null,
    timezone: "Europe/Berlin",
  });
  const byId = Object.fromEntries(scheduled.map((s) => [s.id, s.text]));
  assert.deepEqual(Object.keys(byId), [
    "snippet-curl",
    "snippet-cron",
    "snippet-systemd",
    "snippet-kubernetes",
  ]);
  for (const text of Object.values(byId)) assert.ok(text.includes(ping), text);
  assert.match(byId["snippet-cron"], /^CRON_TZ=Europe\/Berlin\n30 2 \* \* \* /);
  assert.match(byId["snippet-cron"], /\/\$\?$/, "the crontab line pings with the exit code");
  assert.match(byId["snippet-systemd"], /OnFailure=nightly-backup-failed\.service/);
  assert.match(byId["snippet-systemd"], new RegExp(`ExecStartPost=.* ${ping}\n`));
  assert.match(byId["snippet-systemd"], new RegExp(`${ping}/fail$`));
  assert.match(
    byId["snippet-kubernetes"],
    /schedule: "30 2 \* \* \*"\n {2}timeZone: "Europe\/Berlin"/,
  );
  assert.match(byId["snippet-kubernetes"], /\$PING|\/\$code/);

  // A period becomes cron's own words where cron can say it, and a note where it cannot.
  assert.equal(cronOf({ schedule: null, period_seconds: 300 }), "*/5 * * * *");
  assert.equal(cronOf({ schedule: null, period_seconds: 3600 }), "0 * * * *");
  assert.equal(cronOf({ schedule: null, period_seconds: 6 * 3600 }), "0 */6 * * *");
  assert.equal(cronOf({ schedule: null, period_seconds: 86400 }), "0 0 * * *");
  assert.equal(cronOf({ schedule: null, period_seconds: 45 }), null);
  const odd = snippets({
    name: "x",
    ping_url: ping,
    schedule: null,
    period_seconds: 45,
    timezone: null,
  });
  assert.match(odd[1].text, /^# Set the times/);
  assert.ok(!odd[1].text.includes("CRON_TZ"), "no zone for a period");
  assert.equal(unitName("--"), "job");
});

Deno.test("runs are paired from the pings: a start and the success or failure after it", () => {
  const at = (s: number) => new Date(Date.UTC(2026, 10, 28, 12, 0, s)).toISOString();
  const p = (n: number, s: number, kind: string, exit_code: number | null = null) => ({
    n,
    at: at(s),
    kind: kind as "success",
    exit_code,
    method: "GET",
    address: null,
    body: null,
    body_bytes: 0,
  });
  // The API answers the latest first.
  const pings = [
    p(7, 40, "exit", 2),
    p(6, 33, "start"),
    p(5, 30, "log"),
    p(4, 25, "exit", 0),
    p(3, 20, "start"),
    p(2, 12, "success"),
    p(1, 10, "start"),
    p(0, 5, "success"), // no start before it: not timed
  ];
  assert.deepEqual(runsOf(pings), [
    { at: at(12), ms: 2000, ok: true },
    { at: at(25), ms: 5000, ok: true },
    { at: at(40), ms: 7000, ok: false },
  ]);
  assert.equal(
    runsSummary(runsOf(pings)),
    "3 timed runs (1 failed): shortest 2.0 s, longest 7.0 s, latest 7.0 s.",
  );
  assert.match(runsSummary([]), /^No timed runs/);
});

Deno.test("the form sends a period or a schedule with its zone, never both", () => {
  const values = {
    name: "backup",
    timing: "period",
    period_seconds: "3600",
    schedule: "30 2 * * *",
    timezone: "Europe/Berlin",
    grace_seconds: "300",
    max_duration_seconds: "",
    min_duration_seconds: "60",
  };
  assert.deepEqual(timingBody(values, false), {
    period_seconds: 3600,
    grace_seconds: 300,
    min_duration_seconds: 60,
  });
  assert.deepEqual(timingBody({ ...values, timing: "schedule" }, true), {
    schedule: "30 2 * * *",
    timezone: "Europe/Berlin",
    grace_seconds: 300,
    max_duration_seconds: null,
    min_duration_seconds: 60,
  });
  // What is not a number goes as typed, for the API to refuse beside its field.
  assert.equal(
    timingBody({ ...values, period_seconds: "an hour" }, false).period_seconds,
    "an hour",
  );
});

Deno.test("a heartbeat's timing and deadline read in words", () => {
  const h = {
    period_seconds: 3600,
    schedule: null,
    timezone: null,
    grace_seconds: 300,
    max_duration_seconds: null,
    min_duration_seconds: null,
  };
  assert.equal(timingWords(h), "every 1 h, grace 5 min");
  assert.equal(
    timingWords({ ...h, period_seconds: null, schedule: "30 2 * * *", timezone: "Europe/Berlin" }),
    "cron 30 2 * * * (Europe/Berlin), grace 5 min",
  );
  assert.equal(runWords(h), "from /start, at most 5 min (the grace)");
  assert.equal(
    runWords({ ...h, max_duration_seconds: 2700, min_duration_seconds: 60 }),
    "from /start, at least 1 min and at most 45 min",
  );
  const now = Date.UTC(2026, 10, 28, 12);
  assert.equal(deadlineWords(new Date(now + 240_000).toISOString(), now), "in 4 min");
  assert.equal(deadlineWords(new Date(now - 30_000).toISOString(), now), "passed 30 s ago");
  assert.equal(deadlineWords(null, now), "none pending");
});

Deno.test("a heartbeat's probe URL names the heartbeat the overview's row leads to", () => {
  assert.equal(heartbeatOfUrl("heartbeat://nightly.backup"), "nightly.backup");
  for (const url of ["https://example.com/heartbeat://x", "tcp://127.0.0.1:5432", "heartbeat:/x"]) {
    assert.equal(heartbeatOfUrl(url), null, url);
  }
});
