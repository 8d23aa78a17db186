import assert from "node:assert/strict";
import { sleep } from "./sleep.ts";

Deno.test("sleep waits its time, ends early when its signal aborts, and leaves no listener", async () => {
  let t = performance.now();
  await sleep(30);
  assert.ok(performance.now() - t >= 25, "waited");
  const stop = new AbortController();
  let added = 0, removed = 0;
  const add = stop.signal.addEventListener.bind(stop.signal);
  const remove = stop.signal.removeEventListener.bind(stop.signal);
  Object.assign(stop.signal, {
    addEventListener: (...a: Parameters<typeof add>) => (added++, add(...a)),
    removeEventListener: (...a: Parameters<typeof remove>) => (removed++, remove(...a)),
  });
  for (let i = 0; i < 3; i++) await sleep(1, stop.signal);
  assert.equal(removed, added, "each wait takes its listener away");
  t = performance.now();
  const waiting = sleep(10_000, stop.signal);
  stop.abort();
  await waiting;
  await sleep(10_000, stop.signal); // already aborted: at once
  assert.ok(performance.now() - t < 1_000, "ended by the abort");
});
