import assert from "node:assert/strict";
import { createRateLimiter, type RateLimiter } from "./rate_limit.ts";

function clock() {
  let ms = 0;
  return { now: () => ms, advance: (by: number) => ms += by };
}

function takeMany(limiter: RateLimiter, key: string, n: number): number {
  let admitted = 0;
  for (let i = 0; i < n; i++) if (limiter.take(key).ok) admitted++;
  return admitted;
}

Deno.test("a full bucket admits a burst of twice the rate, then refuses", () => {
  const { now } = clock();
  const limiter = createRateLimiter({ perSecond: 10, now })!;
  assert.equal(takeMany(limiter, "k", 25), 20);
  const refused = limiter.take("k");
  assert.deepEqual(refused, { ok: false, retryAfterSeconds: 1 });
});

Deno.test("tokens flow back at the configured rate", () => {
  const { now, advance } = clock();
  const limiter = createRateLimiter({ perSecond: 10, now })!;
  takeMany(limiter, "k", 20);
  advance(500);
  assert.equal(takeMany(limiter, "k", 10), 5);
  advance(10_000);
  // Never more than the burst, however long the pause.
  assert.equal(takeMany(limiter, "k", 100), 20);
});

Deno.test("each key has a bucket of its own", () => {
  const { now } = clock();
  const limiter = createRateLimiter({ perSecond: 1, now })!;
  assert.equal(takeMany(limiter, "a", 5), 2);
  assert.equal(takeMany(limiter, "b", 5), 2);
});

Deno.test("Retry-After counts the whole seconds until a token is back", () => {
  const { now } = clock();
  const limiter = createRateLimiter({ perSecond: 0.25, burst: 1, now })!;
  assert.ok(limiter.take("k").ok);
  assert.deepEqual(limiter.take("k"), { ok: false, retryAfterSeconds: 4 });
});

Deno.test("a rate of 0 turns limiting off", () => {
  assert.equal(createRateLimiter({ perSecond: 0 }), null);
});

Deno.test("past maxKeys, the key used least recently is forgotten", () => {
  const { now } = clock();
  const limiter = createRateLimiter({ perSecond: 1, burst: 1, maxKeys: 2, now })!;
  assert.ok(limiter.take("a").ok);
  assert.ok(limiter.take("b").ok);
  // "a" is used after "b", twice in a row: "b" is now the least recent.
  assert.equal(limiter.take("a").ok, false);
  assert.equal(limiter.take("a").ok, false);
  assert.ok(limiter.take("c").ok);
  // "a" was kept, empty; "b" was forgotten, and starts full again.
  assert.equal(limiter.take("a").ok, false);
  assert.ok(limiter.take("b").ok);
});
