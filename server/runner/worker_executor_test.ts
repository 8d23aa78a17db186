import assert from "node:assert/strict";
import { probeExpect } from "@probe/shared";
import { startTarget } from "../testing/target_server.ts";
import { createWorkerExecutor } from "./worker_executor.ts";

const probe = (url: string, expect: unknown = null) => ({
  url,
  method: "GET",
  headers: {},
  body: null,
  latency: null,
  expect: expect === null ? null : probeExpect.parse(expect),
});

Deno.test("the worker runs a probe as executeProbe does: its policy, its verdict, its result", async () => {
  const target = await startTarget();
  const open = createWorkerExecutor({ allowNetworks: ["127.0.0.0/8"], timeoutMs: 5000 });
  const closed = createWorkerExecutor({ allowNetworks: [], timeoutMs: 5000 });
  try {
    const up = await open.execute(
      probe(`${target.origin}/health`, { json: [{ path: "/status", op: "eq", value: "UP" }] }),
    );
    assert.equal(up.outcome, "up");
    assert.equal(up.httpStatus, 200);
    assert.deepEqual(up.failedChecks, []);
    assert.ok(up.startedAt instanceof Date);
    const down = await open.execute(
      probe(`${target.origin}/health`, { json: [{ path: "/status", op: "eq", value: "DOWN" }] }),
    );
    assert.deepEqual(down.failedChecks, [
      { check: "json.0", expected: '/status eq "DOWN"', seen: '"UP"' },
    ]);
    // The network policy is the worker's too: loopback is refused unless opened.
    const blocked = await closed.execute(probe(`${target.origin}/health`));
    assert.equal(blocked.outcome, "blocked");
    assert.equal(target.hits.length, 2);
  } finally {
    open.close();
    closed.close();
    await target.close();
  }
});

Deno.test("closing the worker fails the runs still pending", async () => {
  const target = await startTarget();
  const worker = createWorkerExecutor({ allowNetworks: ["127.0.0.0/8"], timeoutMs: 30_000 });
  try {
    const hanging = worker.execute(probe(`${target.origin}/hang`)).then(() => null, (e) => e);
    while (target.hits.length === 0) await new Promise((r) => setTimeout(r, 20));
    worker.close();
    assert.match(String(await hanging), /probe worker closed/);
  } finally {
    await target.close();
  }
});

Deno.test("runs started together each get their own result, and a run closed before it went is never made", async () => {
  const target = await startTarget();
  const worker = createWorkerExecutor({ allowNetworks: ["127.0.0.0/8"], timeoutMs: 5000 });
  try {
    // Started in one turn: one message to the worker, answers in batches, each to its run.
    const statuses = [200, 201, 404, 500, 503, 202, 418, 302, 410, 299];
    const results = await Promise.all(
      statuses.map((status) => worker.execute(probe(`${target.origin}/status/${status}`))),
    );
    assert.deepEqual(results.map((r) => r.httpStatus), statuses);
    assert.deepEqual(
      results.map((r) => r.outcome),
      statuses.map((s) => s < 400 ? "up" : "down"),
    );
    const hits = target.hits.length;
    // Closed in the same turn it was started: it fails, and the worker is never asked to run it.
    const closed = worker.execute(probe(`${target.origin}/status/200`)).then(() => null, (e) => e);
    worker.close();
    assert.match(String(await closed), /probe worker closed/);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(target.hits.length, hits);
  } finally {
    worker.close();
    await target.close();
  }
});

Deno.test("the worker tells its heap once it runs, and nothing once closed", async () => {
  const target = await startTarget();
  const executor = createWorkerExecutor({ allowNetworks: ["127.0.0.0/8"], timeoutMs: 5000 });
  try {
    assert.equal(await executor.heap(), null, "no worker before the first run");
    await executor.execute(probe(`${target.origin}/health`));
    const [a, b] = await Promise.all([executor.heap(), executor.heap()]);
    assert.deepEqual(a, b, "reads at once share one answer");
    assert.ok(a && a.heapUsedBytes > 1e6 && a.heapTotalBytes >= a.heapUsedBytes, JSON.stringify(a));
    executor.close();
    assert.equal(await executor.heap(), null);
  } finally {
    executor.close();
    await target.close();
  }
});
