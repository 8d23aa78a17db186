import assert from "node:assert/strict";
import {
  addInto,
  BUCKET_BOUNDS,
  bucketOf,
  BUCKETS,
  emptyHistogram,
  percentileOf,
} from "./histogram.ts";

Deno.test("latencies fall in the bucket whose bounds hold them", () => {
  assert.equal(bucketOf(0), 0);
  assert.equal(bucketOf(1), 0);
  assert.equal(bucketOf(2), 1);
  assert.equal(bucketOf(101), BUCKET_BOUNDS.indexOf(125));
  assert.equal(bucketOf(125), BUCKET_BOUNDS.indexOf(125));
  assert.equal(bucketOf(10_000_000), BUCKETS - 1);
});

Deno.test("percentiles from a histogram land in the true value's bucket", () => {
  // 1..1000 ms, once each: the true p50 is 500, p95 950, p99 990, max 1000.
  const h = emptyHistogram();
  for (let ms = 1; ms <= 1000; ms++) h[bucketOf(ms)]++;
  for (const [p, exact] of [[0.5, 500], [0.95, 950], [0.99, 990], [1, 1000]]) {
    const estimate = percentileOf(h, p, 1000)!;
    assert.equal(bucketOf(estimate), bucketOf(exact), `p${p * 100}: ${estimate} vs ${exact}`);
    assert.ok(Math.abs(estimate - exact) <= exact * 0.25);
  }
});

Deno.test("a percentile never exceeds the maximum seen", () => {
  const h = emptyHistogram();
  h[bucketOf(130)] = 10; // the bucket runs to 150, the slowest run took 130
  assert.equal(percentileOf(h, 0.99, 130), 130);
  assert.equal(percentileOf(emptyHistogram(), 0.5, 0), null);
});

Deno.test("histograms add bucket by bucket", () => {
  const a = emptyHistogram();
  const b = emptyHistogram();
  a[3] = 2;
  b[3] = 5;
  b[7] = 1;
  const sum = addInto(a, b);
  assert.equal(sum[3], 7);
  assert.equal(sum[7], 1);
});
