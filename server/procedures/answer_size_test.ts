import assert from "node:assert/strict";
import { AnswerTooLargeError } from "./errors.ts";
import { AnswerBudget, boundedStringify, itemMeter, Slots } from "./answer_size.ts";

Deno.test("boundedStringify gives JSON.stringify's text within the limit", () => {
  const values: unknown[] = [
    null,
    1,
    'a"b\u2028',
    undefined,
    [],
    {},
    [1, undefined, () => 1, Symbol("s"), null],
    { a: undefined, b: () => 1, c: 1, d: { e: [1, { f: new Date(0) }] } },
    { result: { data: { data: [{ x: 1, y: [1, 2, { z: "deep" }] }], meta: { next: null } } } },
    { skip: { toJSON: () => undefined }, keep: 2 },
    { first: { toJSON: () => undefined } },
    Object.assign(Object.create(null), { n: 1 }),
    [new Number(3), new String("s"), new Boolean(false)],
    { big: 10n.toString(), nested: [[[[[[1]]]]]] },
  ];
  values.forEach((value, i) => {
    assert.equal(boundedStringify(value, 1_000_000), JSON.stringify(value), `value ${i}`);
  });
});

Deno.test("boundedStringify gives up past the limit, with at most one item over it", () => {
  const item = { text: "x".repeat(1000) };
  const list = { data: Array(10_000).fill(item) };
  assert.equal(boundedStringify(list, 50_000), null);
  const exact = JSON.stringify(list);
  assert.equal(boundedStringify(list, exact.length), exact);
  assert.equal(boundedStringify(list, exact.length - 1), null);
});

Deno.test("an answer budget stops calling once spent, and runs a few calls at a time", async () => {
  const budget = new AnswerBudget(100, new Slots(2));
  let running = 0;
  let most = 0;
  let called = 0;
  const call = async () => {
    called++;
    running++;
    most = Math.max(most, running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    running--;
    return 60;
  };
  const results = await Promise.allSettled(
    Array.from({ length: 10 }, () => budget.run(call, (n) => n)),
  );
  assert.equal(most, 2);
  // Two run at once; the third may start as the first ends, before the second is counted.
  assert.ok(called <= 3, `${called} calls made: those after the budget was spent were not`);
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  for (const r of results.filter((r) => r.status === "rejected")) {
    assert.ok((r as PromiseRejectedResult).reason instanceof AnswerTooLargeError);
  }
  assert.equal(budget.exceeded, true);
});

Deno.test("once the database failed a call, the batch's calls left fail with it at once", async () => {
  const budget = new AnswerBudget(1_000_000, new Slots(1));
  const down = new Error("The database did not answer within 2000 ms");
  let called = 0;
  const call = async () => {
    called++;
    await new Promise((resolve) => setTimeout(resolve, 5));
    budget.unavailable ??= down; // what the middleware records from the failed result
    return 0;
  };
  const results = await Promise.allSettled(
    Array.from({ length: 20 }, () => budget.run(call, (n) => n)),
  );
  assert.equal(called, 1, "one deadline waited, not twenty");
  assert.equal(results.filter((r) => r.status === "rejected").length, 19);
  for (const r of results.slice(1)) assert.equal((r as PromiseRejectedResult).reason, down);
});

Deno.test("an item meter refuses a list as soon as its items pass the room, never one that fits", () => {
  const items = Array.from({ length: 100 }, (_, i) => ({ id: i, text: "x".repeat(i) }));
  const text = JSON.stringify({ data: items, meta: { count: 100, next_after: null } });
  // The whole answer's length: its items alone never pass it, nor what they are known to take.
  const fits = itemMeter(text.length, text.length);
  fits.expect(JSON.stringify(items).length);
  for (let i = 0; i < 100; i += 10) fits.count(items.slice(i, i + 10));
  // Room for the first 50 items only: refused within the part that passes it.
  const room = JSON.stringify(items.slice(0, 50)).length;
  const meter = itemMeter(room, 12345);
  const refused = (error: unknown) =>
    error instanceof AnswerTooLargeError && error.maxBytes === 12345;
  let told = 0;
  assert.throws(() => {
    for (let i = 0; i < 100; i += 10) {
      meter.count(items.slice(i, i + 10));
      told += 10;
    }
  }, refused);
  assert.equal(told, 50);
  // Known before they are read to take more than the room: refused before any is counted.
  assert.throws(() => itemMeter(room, 12345).expect(room + 1), refused);
});

Deno.test("boundedStringify refuses a small answer past the limit too, and a long list is walked", () => {
  const one = { data: { project: "p", label: "x".repeat(100) } };
  assert.equal(boundedStringify(one, 50), null);
  assert.equal(boundedStringify(one, 200), JSON.stringify(one));
  // A list of more items than are serialised whole, with toJSON below and above the split depth.
  const many = { data: Array.from({ length: 40 }, (_, i) => ({ at: new Date(i), i })) };
  assert.equal(boundedStringify(many, 1_000_000), JSON.stringify(many));
  assert.equal(boundedStringify(many, 100), null);
  const custom = { data: { toJSON: () => [1, 2, 3] } };
  assert.equal(boundedStringify(custom, 1_000), JSON.stringify(custom));
});
