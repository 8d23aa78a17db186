/**
 * The log of requests outside the keyed API: counted per route template, method and
 * status in one line per window, whatever their number; never their raw path.
 */
import assert from "node:assert/strict";
import { createLogger } from "../base/log.ts";
import { backends, startTestApp, TestClient } from "../testing/app.ts";
import { createRequestSummary, MAX_SUMMARY_ENTRIES } from "./access_log.ts";

for (const backend of backends()) {
  Deno.test(`a flood of unkeyed requests writes a bounded log with the right counts [${backend}]`, async () => {
    const lines: string[] = [];
    const app = await startTestApp(backend, {
      log: createLogger("info", (line) => lines.push(line)),
    });
    let closed = false;
    try {
      const api = new TestClient(app.handler);
      const longPath = `/${"n".repeat(254)}`;
      const sent = { unknown: 1500, status: 500, badge: 300, noKey: 200, health: 100 };
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < sent.unknown; i++) calls.push(api.get(longPath, { key: null }));
      for (let i = 0; i < sent.status; i++) calls.push(api.get("/status/nope", { key: null }));
      for (let i = 0; i < sent.badge; i++) calls.push(api.get(`/badge/x${i}.svg`, { key: null }));
      for (let i = 0; i < sent.noKey; i++) calls.push(api.get("/api/v1/projects", { key: null }));
      for (let i = 0; i < sent.health; i++) calls.push(api.get("/healthz", { key: null }));
      await Promise.all(calls);
      // A keyed request is still one line of its own.
      assert.equal((await api.get("/api/v1/projects")).status, 200);
      closed = true;
      await app.close();

      const total = Object.values(sent).reduce((a, b) => a + b, 0);
      const bytes = lines.reduce((n, line) => n + line.length + 1, 0);
      assert.ok(
        bytes < 2000,
        `${bytes} bytes of log for ${total} requests: ${lines.join("\n").slice(0, 500)}`,
      );
      assert.ok(!lines.join("\n").includes("nnnnnnnn"), "no raw path");
      assert.ok(!lines.join("\n").includes("nope"), "no raw path");
      const parsed = lines.map((line) => JSON.parse(line));
      const keyed = parsed.filter((l) => l.msg === "request");
      assert.deepEqual(keyed.map((l) => [l.path, l.status]), [["/api/v1/projects", 200]]);
      const summaries = parsed.filter((l) => l.msg === "requests");
      assert.equal(summaries.length, 1, "one window");
      const [summary] = summaries;
      assert.equal(summary.total, total);
      const count = (route: string, status: number) =>
        summary.counts.find((c: { route: string; status: number }) =>
          c.route === route && c.status === status
        )?.count;
      // Paths no route answers, missing status pages and badges alike: `other`, never the path.
      assert.equal(count("other", 404), sent.unknown + sent.status + sent.badge);
      assert.equal(count("/api/v1/projects", 401), sent.noKey);
      assert.equal(count("/healthz", 200), sent.health);
      assert.equal(
        summary.counts.reduce((n: number, c: { count: number }) => n + c.count, 0),
        total,
      );
    } finally {
      if (!closed) await app.close();
    }
  });
}

Deno.test("the summary writes one line per window, on the next request after it ends", () => {
  const lines: string[] = [];
  let clock = 0;
  const summary = createRequestSummary({
    log: createLogger("info", (line) => lines.push(line)),
    windowSeconds: 10,
    now: () => clock,
  });
  for (let i = 0; i < 1000; i++) summary.count("other", "GET", 404);
  summary.count("/status/*", "GET", 200);
  clock = 9_999;
  summary.tick();
  assert.equal(lines.length, 0, "the window has not ended");
  clock = 10_000;
  summary.count("other", "GET", 404); // ends the first window, and opens the second
  assert.equal(lines.length, 1);
  const first = JSON.parse(lines[0]);
  assert.equal(first.msg, "requests");
  assert.equal(first.window_s, 10);
  assert.equal(first.total, 1001);
  assert.deepEqual(first.counts, [
    { route: "other", method: "GET", status: 404, count: 1000 },
    { route: "/status/*", method: "GET", status: 200, count: 1 },
  ]);
  clock = 30_000;
  summary.tick(); // a keyed request long after: the second window's one request
  assert.equal(JSON.parse(lines[1]).total, 1);
  clock = 50_000;
  summary.tick();
  summary.flush();
  assert.equal(lines.length, 2, "nothing counted, nothing written");
  // Distinct triples are bounded: the rest are counted under `other`.
  for (let i = 0; i < MAX_SUMMARY_ENTRIES + 50; i++) summary.count(`/r${i}`, "GET", 200);
  summary.flush();
  const capped = JSON.parse(lines[2]);
  assert.equal(capped.counts.length, MAX_SUMMARY_ENTRIES + 1);
  assert.equal(capped.counts[0].route, "other");
  assert.equal(capped.counts[0].count, 50);
  assert.equal(capped.total, MAX_SUMMARY_ENTRIES + 50);
});
