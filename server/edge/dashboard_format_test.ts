/** How the dashboard writes numbers, times and URLs (server/ui/format.js): one way everywhere. */
import assert from "node:assert/strict";
import { millis, since, urlParts } from "../ui/format.js";

Deno.test("durations read one way: ms below a second, seconds with one decimal from it", () => {
  assert.equal(millis(null), "—");
  assert.equal(millis(0), "0 ms");
  assert.equal(millis(999), "999 ms");
  assert.equal(millis(1000), "1.0 s");
  assert.equal(millis(5000), "5.0 s", "never 5000 ms beside 10.0 s");
  assert.equal(millis(10_000), "10.0 s");
  assert.equal(millis(120_000), "120.0 s");
});

Deno.test("where a short history starts: the time on its day, the date before it", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  assert.equal(since("2026-11-25T11:45:10Z", now), "since 11:45");
  assert.equal(since("2026-11-24T23:05:00Z", now), "since 11-24 23:05");
});

Deno.test("a URL may break after each / ? and &, and nowhere else", () => {
  const url = "https://shop.example.com/api/v1/health?deep=1&x=2";
  const parts = urlParts(url);
  assert.equal(parts.filter((p) => p !== null).join(""), url);
  assert.deepEqual(parts.filter((p) => p !== null), [
    "https:/",
    "/",
    "shop.example.com/",
    "api/",
    "v1/",
    "health?",
    "deep=1&",
    "x=2",
  ]);
  assert.deepEqual(urlParts("example"), ["example"]);
});
