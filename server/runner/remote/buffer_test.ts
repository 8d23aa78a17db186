import assert from "node:assert/strict";
import type { PostedResult } from "@probe/shared";
import { ResultBuffer } from "./buffer.ts";

const result = (run_id: string): PostedResult => ({
  run_id,
  started_at: new Date(0).toISOString(),
  duration_ms: 1,
  outcome: "up",
  http_status: 200,
  error: null,
  address: null,
  failed_checks: null,
});

Deno.test("the result buffer keeps at most its bound, dropping the oldest", () => {
  const buffer = new ResultBuffer(3, 60_000, () => 0);
  for (const id of ["a", "b", "c", "d", "e"]) buffer.add(result(id));
  assert.equal(buffer.length, 3);
  assert.equal(buffer.dropped, 2);
  assert.deepEqual(buffer.peek(10).map((r) => r.run_id), ["c", "d", "e"]);
  buffer.remove(new Set(["d"]));
  assert.deepEqual(buffer.peek(10).map((r) => r.run_id), ["c", "e"]);
});

Deno.test("the result buffer drops what is older than its age", () => {
  let now = 0;
  const buffer = new ResultBuffer(100, 10_000, () => now);
  buffer.add(result("old"));
  now = 5_000;
  buffer.add(result("new"));
  now = 12_000;
  assert.equal(buffer.expire(), 1);
  assert.deepEqual(buffer.peek(10).map((r) => r.run_id), ["new"]);
  assert.equal(buffer.dropped, 1);
});
