import assert from "node:assert/strict";
import { createLogger, createStdoutWriter } from "./log.ts";

/** A stdout that takes at most `chunk` bytes a write, as a pipe may. */
function sink(chunk = Infinity) {
  const writes: Uint8Array[] = [];
  return {
    writes,
    text: () => new TextDecoder().decode(new Uint8Array(writes.flatMap((w) => [...w]))),
    writeSync(bytes: Uint8Array) {
      const taken = bytes.slice(0, Math.min(chunk, bytes.length));
      writes.push(taken);
      return taken.length;
    },
  };
}

Deno.test("the lines of a turn go out in one write, in order, when flushed", () => {
  const out = sink();
  const writer = createStdoutWriter(out, 1024);
  writer.write("one");
  writer.write("twö ✓");
  assert.equal(out.writes.length, 0);
  writer.flush();
  assert.equal(out.writes.length, 1);
  assert.equal(out.text(), "one\ntwö ✓\n");
  writer.flush();
  assert.equal(out.writes.length, 1, "nothing more to write");
});

Deno.test("a batch that would overflow is written first; a line longer than a batch alone", () => {
  const out = sink(7); // partial writes: every byte still goes out, in order
  const writer = createStdoutWriter(out, 16);
  writer.write("12345");
  writer.write("abcde"); // 12 bytes worst case for this one: the first line goes out first
  const long = "x".repeat(40);
  writer.write(long);
  writer.write("end");
  writer.flush();
  assert.equal(out.text(), `12345\nabcde\n${long}\nend\n`);
});

Deno.test("the lines are flushed on the next turn without being asked", async () => {
  const out = sink();
  const log = createLogger("info", createStdoutWriter(out, 1024).write);
  log.info("hello", { n: 1 });
  log.debug("below the level");
  await new Promise((resolve) => setTimeout(resolve, 5));
  const line = JSON.parse(out.text());
  assert.equal(line.msg, "hello");
  assert.equal(line.n, 1);
  assert.equal(line.level, "info");
});
