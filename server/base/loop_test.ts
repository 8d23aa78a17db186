import assert from "node:assert/strict";
import { createLoop } from "./loop.ts";
import { createLogger } from "./log.ts";
import { ManualClock } from "../testing/manual_clock.ts";

/** A loop over `task` on a manual clock, and the log lines it wrote. */
function loopOf(task: () => Promise<unknown>, options: { maxBackoffMs?: number } = {}) {
  const clock = new ManualClock();
  const lines: string[] = [];
  const loop = createLoop({
    name: "test task",
    clock,
    log: createLogger("info", (line) => lines.push(JSON.parse(line).msg)),
    everyMs: 1000,
    task,
    ...options,
  });
  return { clock, loop, lines };
}

Deno.test("a loop runs at once, then after each pause, until stopped", async () => {
  let runs = 0;
  const { clock, loop } = loopOf(() => Promise.resolve(runs++));
  assert.equal(loop.start(), true);
  assert.equal(loop.start(), false, "started once");
  await clock.sleepsReach(1);
  assert.equal(runs, 1);
  clock.advance(999);
  assert.equal(runs, 1, "not before the pause is over");
  clock.advance(1);
  await clock.sleepsReach(2);
  assert.equal(runs, 2);
  assert.equal(await loop.stop(), true);
  assert.equal(clock.sleeping, 0, "no timer is left");
  clock.advance(10_000);
  assert.equal(runs, 2);
  assert.equal(await loop.stop(), false, "stopped once");
});

Deno.test("waking runs at once, or again as soon as the run under way ends", async () => {
  let runs = 0;
  let release = () => {};
  const { clock, loop } = loopOf(() => {
    runs++;
    return new Promise<void>((resolve) => release = resolve);
  });
  loop.wake();
  assert.equal(runs, 0, "a loop not started is not woken");
  loop.start();
  assert.equal(runs, 1);
  loop.wake();
  loop.wake();
  assert.equal(runs, 1, "one run at a time");
  release();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(runs, 2, "the wake-ups during the run bring one more, without waiting the pause");
  release();
  await clock.sleepsReach(1);
  loop.wake();
  assert.equal(runs, 3, "a sleeping loop runs at once");
  release();
  await clock.sleepsReach(2);
  await loop.stop();
});

Deno.test("a run that says more is waiting is followed at once", async () => {
  let runs = 0;
  const { clock, loop } = loopOf(() => Promise.resolve(++runs < 3));
  loop.start();
  await clock.sleepsReach(1);
  assert.equal(runs, 3, "two more runs before the first pause");
  await loop.stop();
});

Deno.test("stop waits for the run under way and no run starts after it", async () => {
  let release = () => {};
  let ended = false;
  let runs = 0;
  const { loop } = loopOf(async () => {
    runs++;
    await new Promise<void>((resolve) => release = resolve);
    ended = true;
  });
  loop.start();
  const stopped = loop.stop();
  loop.wake();
  release();
  await stopped;
  assert.equal(ended, true);
  assert.equal(runs, 1);
});

Deno.test("failures are logged, and back off to the longest pause given", async () => {
  let fail = true;
  let runs = 0;
  const { clock, loop, lines } = loopOf(() => {
    runs++;
    return fail ? Promise.reject(new Error("down")) : Promise.resolve();
  }, { maxBackoffMs: 5000 });
  loop.start();
  await clock.sleepsReach(1);
  assert.deepEqual(lines, ["test task failed"]);
  // Pauses after failures in a row: 1 s, 2 s, 4 s, then 5 s at most.
  for (const [pause, sleeps] of [[1000, 2], [2000, 3], [4000, 4], [5000, 5]]) {
    clock.advance(pause - 1);
    assert.equal(runs, sleeps - 1, `not before ${pause} ms`);
    if (pause === 5000) fail = false;
    clock.advance(1);
    await clock.sleepsReach(sleeps);
    assert.equal(runs, sleeps);
  }
  // A run that succeeds puts the pause back to 1 s.
  clock.advance(1000);
  await clock.sleepsReach(6);
  assert.equal(runs, 6);
  assert.equal(lines.length, 4);
  await loop.stop();
});
