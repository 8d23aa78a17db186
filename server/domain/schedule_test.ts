import assert from "node:assert/strict";
import { gridAfter, nextDue, offsetOf } from "./schedule.ts";

Deno.test("offsets are stable and spread 10,000 probes evenly over the interval", () => {
  const interval = 60_000;
  const buckets = new Array(60).fill(0);
  for (let key = 1; key <= 10_000; key++) {
    const offset = offsetOf(key, interval);
    assert.ok(offset >= 0 && offset < interval);
    assert.equal(offsetOf(BigInt(key), interval), offset, "the same key, the same offset");
    buckets[Math.floor(offset / 1000)]++;
  }
  // 10,000 over 60 one-second slots is 166.7 each; the golden-ratio spread keeps every slot
  // within a few probes of that, where a hash would scatter by ±40.
  for (const count of buckets) assert.ok(count >= 160 && count <= 173, `slot holds ${count}`);
});

Deno.test("consecutive keys never share an offset within one interval's worth of keys", () => {
  const interval = 10_000;
  const seen = new Set<number>();
  for (let key = 500; key < 500 + interval; key++) seen.add(offsetOf(key, interval));
  assert.equal(seen.size, interval);
});

Deno.test("keys beyond 2^53 still give an offset inside the interval", () => {
  const offset = offsetOf("9007199254740993123", 86_400_000);
  assert.ok(Number.isInteger(offset) && offset >= 0 && offset < 86_400_000);
});

Deno.test("the grid point after a time is strictly later and on the probe's grid", () => {
  assert.equal(gridAfter(0, 250, 1000), 250);
  assert.equal(gridAfter(250, 250, 1000), 1250);
  assert.equal(gridAfter(1249, 250, 1000), 1250);
  assert.equal(gridAfter(-5, 0, 1000), 0);
});

Deno.test("a run on time is next due one interval later", () => {
  assert.equal(nextDue({ due: 1250, now: 1300, offsetMs: 250, intervalMs: 1000 }), 2250);
});

Deno.test("a late run makes up the next slot at once, a very late one skips missed slots", () => {
  // Finished 1.5 intervals late: the next slot (2250) is past but within one interval: kept.
  assert.equal(nextDue({ due: 1250, now: 2750, offsetMs: 250, intervalMs: 1000 }), 2250);
  // An hour late: missed slots are skipped, the next one is after now.
  assert.equal(nextDue({ due: 1250, now: 3_601_000, offsetMs: 250, intervalMs: 1000 }), 3_601_250);
});

Deno.test("after the interval changes a probe moves onto its new grid", () => {
  const offset = offsetOf(7, 30_000);
  const next = nextDue({ due: 123_456, now: 123_500, offsetMs: offset, intervalMs: 30_000 });
  assert.equal((next - offset) % 30_000, 0);
  assert.ok(next > 123_456 && next <= 123_456 + 30_000);
});
