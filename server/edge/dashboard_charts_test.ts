/**
 * The dashboard's chart helpers that need no browser: the time axis's labels, how much history a
 * window covers, and the window a probe page opens on.
 */
import assert from "node:assert/strict";
import { bucketOutcome, fitWindow, runsText, timeTicks } from "../ui/charts.js";
import { historySpan } from "../ui/format.js";
import { firstWindow, mergeResults } from "../ui/probe.js";

const at = (iso: string) => Date.parse(iso) / 1000;

Deno.test("the time axis reads 24-hour UTC, the date at the first tick and at midnight", () => {
  assert.deepEqual(
    timeTicks(
      [at("2026-11-24T23:30:00Z"), at("2026-11-25T00:00:00Z"), at("2026-11-25T00:30:00Z")],
      1800,
    ),
    ["23:30\n11-24", "00:00\n11-25", "00:30"],
  );
  assert.deepEqual(timeTicks([at("2026-11-24T00:00:00Z"), at("2026-11-25T00:00:00Z")], 86_400), [
    "11-24",
    "11-25",
  ]);
  // Never the locale's "10am 11/24/26".
  for (const label of timeTicks([at("2026-11-24T10:00:00Z")], 3600)) {
    assert.doesNotMatch(label, /am|pm|\//i);
  }
});

Deno.test("a window longer than the history says how much history there is", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  assert.equal(historySpan("2026-11-25T11:48:00Z", 86_400, now), "12 min");
  assert.equal(historySpan("2026-11-25T07:00:00Z", 7 * 86_400, now), "5 h 0 min");
  assert.equal(historySpan("2026-11-24T11:00:00Z", 86_400, now), null, "the history fills 24 h");
  assert.equal(historySpan(null, 86_400, now), null);
});

Deno.test("a probe page opens on the smallest window that holds the probe's history", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  const run = (minutesAgo: number) => ({
    started_at: new Date(now - minutesAgo * 60_000).toISOString(),
    duration_ms: 5,
    outcome: "up" as const,
    http_status: 200,
    error: null,
    address: null,
    failed_checks: null,
    location: "local",
    trigger: "schedule" as const,
    in_maintenance: false,
  });
  assert.equal(firstWindow([], now), "1h");
  assert.equal(firstWindow([run(1), run(50)], now), "1h");
  assert.equal(firstWindow([run(1), run(61)], now), "6h");
  assert.equal(firstWindow([run(1), run(7 * 60)], now), "24h");
  assert.equal(firstWindow([run(1), run(25 * 60)], now), "24h");
  // A full first page of a 15-minute-old probe (runs every 10 s): the hour, not 24 hours.
  assert.equal(firstWindow(Array.from({ length: 50 }, (_, i) => run(i / 6)), now), "1h");
});

Deno.test("a chart's window fits the history the series says the probe has", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  const ago = (minutes: number) => new Date(now - minutes * 60_000).toISOString();
  assert.equal(fitWindow(null, now), "1h");
  assert.equal(fitWindow(ago(15), now), "1h");
  assert.equal(fitWindow(ago(60), now), "1h");
  assert.equal(fitWindow(ago(61), now), "6h");
  assert.equal(fitWindow(ago(6 * 60 + 1), now), "24h");
  assert.equal(fitWindow(ago(40 * 24 * 60), now), "24h", "an old probe opens on 24 hours");
});

Deno.test("the overview's last runs in words", () => {
  assert.equal(runsText([]), "No runs in the last 24 hours");
  assert.equal(runsText(["up"]), "Last run: 1 up; the latest up");
  assert.equal(
    runsText(["up", "down", "maintenance", "blocked", "up", "down"]),
    "Last 6 runs: 2 up, 2 down, 1 in maintenance, 1 blocked; the latest down",
  );
});

Deno.test("results merged across refreshes: newest first, each run once, none lost", () => {
  const run = (iso: string, trigger: "schedule" | "manual" = "schedule", location = "local") => ({
    started_at: iso,
    duration_ms: 5,
    outcome: "up" as const,
    http_status: 200,
    error: null,
    address: null,
    failed_checks: null,
    location,
    trigger,
    in_maintenance: false,
  });
  // The first page before a refresh, an older page, then the first page after two new runs:
  // the run that slid off the first page stays between them.
  const before = [run("2026-11-25T10:03:00Z"), run("2026-11-25T10:02:00Z")];
  const older = [run("2026-11-25T10:01:00Z")];
  const after = [run("2026-11-25T10:05:00Z"), run("2026-11-25T10:04:00Z", "manual")];
  const held = mergeResults(after, mergeResults(before, older));
  assert.deepEqual(held.map((r) => r.started_at.slice(11, 16)), [
    "10:05",
    "10:04",
    "10:03",
    "10:02",
    "10:01",
  ]);
  assert.equal(mergeResults(held, before).length, 5, "a run seen twice is listed once");
  // Two locations' runs started in the same millisecond are two runs.
  const there = run("2026-11-25T10:03:00Z", "schedule", "office");
  assert.equal(mergeResults(held, [there]).length, 6, "another location's run is its own");
});

Deno.test("a chart bucket of blocked runs alone is no failure: its bar says blocked", () => {
  const bucket = (counts: Partial<Record<string, number>>) => ({
    start: "2026-11-25T12:00:00.000Z",
    runs: 0,
    up: 0,
    degraded: 0,
    down: 0,
    blocked: 0,
    maintenance: 0,
    uptime: null,
    p50: null,
    p95: null,
    max: null,
    ...counts,
  });
  assert.equal(bucketOutcome(bucket({ blocked: 3 })), "blocked");
  assert.equal(bucketOutcome(bucket({ runs: 1, up: 1, uptime: 1, blocked: 3 })), "up");
  assert.equal(bucketOutcome(bucket({ runs: 1, down: 1, uptime: 0, blocked: 3 })), "down");
  assert.equal(bucketOutcome(bucket({ blocked: 1, maintenance: 1 })), "blocked");
});
