/**
 * The words for a failed run (`server/ui/failure_words.js`), for each kind of failure, made of
 * what the runner really records: its verdict on an answer (failed checks with what was expected
 * and seen) and its errors for real exchanges that fail (a timeout, a refused connection).
 */
import assert from "node:assert/strict";
import type { ProbeExpect } from "@probe/shared";
import { executeProbe, verdictOf } from "../runner/execute.ts";
import { createNetworkPolicy } from "../base/outbound/network_policy.ts";
import { LOOPBACK_ONLY } from "../testing/app.ts";
import { closedPort } from "../testing/receivers.ts";
import { checkWords, errorWords, failureWords } from "../ui/failure_words.js";

const NOW = Date.parse("2026-11-28T12:00:00Z");
const DAY = 86_400_000;

/** The words for an answer judged by `expect`, as the runner judges it. */
function wordsFor(
  answer: { status?: number; body?: string; headers?: Record<string, string>; validTo?: number },
  expect: ProbeExpect | null,
  latency: number | null = null,
) {
  const run = verdictOf(
    {
      kind: "response",
      address: "127.0.0.1",
      durationMs: 812,
      redirects: 0,
      status: answer.status ?? 200,
      headers: answer.headers ?? {},
      body: answer.body === undefined ? null : new TextEncoder().encode(answer.body),
      certificate: answer.validTo === undefined ? null : { validTo: new Date(answer.validTo) },
    },
    { latency, expect },
    NOW,
  );
  return failureWords({ error: run.error, failed_checks: run.failedChecks });
}

Deno.test("failure words: what an answer failed, as a person says it", () => {
  assert.equal(wordsFor({ status: 500 }, { status: [200] }), "answered HTTP 500, expected 200");
  assert.equal(
    wordsFor({ status: 404 }, { status: ["2xx", 301, 302] }),
    "answered HTTP 404, expected 2xx, 301 or 302",
  );
  assert.equal(wordsFor({ status: 503 }, null), "answered HTTP 503, expected a status below 400");
  assert.equal(wordsFor({ status: 503 }, {}), "answered HTTP 503, expected a status below 400");
  assert.equal(
    wordsFor({ body: '{"status":"broken"}' }, {
      json: [{ path: "/status", op: "eq", value: "ok" }],
    }),
    'JSON /status was "broken", expected "ok"',
  );
  assert.equal(
    wordsFor({ body: '{"queue":812}' }, { json: [{ path: "/queue", op: "le", value: 100 }] }),
    "JSON /queue was 812, expected a value that is at most 100",
  );
  assert.equal(
    wordsFor({ body: "{}" }, { json: [{ path: "/status", op: "exists" }] }),
    "JSON /status was missing",
  );
  assert.equal(
    wordsFor({ body: '{"errors":[1]}' }, { json: [{ path: "/errors", op: "not_exists" }] }),
    "JSON /errors was [1], expected it to be absent",
  );
  assert.equal(
    wordsFor({ body: "<html>" }, { json: [{ path: "/status", op: "eq", value: "ok" }] }),
    "JSON /status: body is not JSON",
  );
  assert.equal(
    wordsFor({ body: "maintenance" }, { body: { contains: ["ok"], not_contains: ["maint"] } }),
    'body did not contain "ok"; body contained "maint"',
  );
  assert.equal(
    wordsFor({ headers: { "content-type": "text/html" } }, {
      headers: [{ name: "Content-Type", op: "contains", value: "json" }],
    }),
    'header content-type was "text/html", expected it to contain "json"',
  );
  assert.equal(
    wordsFor({}, { headers: [{ name: "X-Trace", op: "exists" }] }),
    "header x-trace was missing",
  );
  assert.equal(
    wordsFor({ headers: { "x-api-key": "k-123" } }, {
      headers: [{ name: "X-Api-Key", op: "eq", value: "k-456" }],
    }),
    "header x-api-key was <redacted>, expected <redacted>",
    "a credential header's values are not said",
  );
  assert.equal(
    wordsFor({ validTo: NOW + 6.5 * DAY }, { certificate_days: 14 }),
    "certificate expires in 6 days, expected at least 14",
  );
  assert.equal(
    wordsFor({ validTo: NOW + 0.5 * DAY }, { certificate_days: 14 }),
    "certificate expires today, expected at least 14",
  );
  assert.equal(
    wordsFor({ validTo: NOW - 2 * DAY }, { certificate_days: 14 }),
    "certificate expired on 2026-11-26",
  );
  assert.equal(
    wordsFor({}, { certificate_days: 14 }),
    "certificate check failed: no certificate: the final hop was http",
  );
  assert.equal(
    wordsFor({ status: 200 }, null, 500),
    "answered slower than its expected latency of 0.5 s",
  );
  assert.equal(wordsFor({ status: 200 }, { status: [200] }), null, "a passing run: no words");
});

Deno.test("failure words: past three failed checks, the rest are counted", () => {
  const json = [1, 2, 3, 4, 5].map((n) => ({ path: `/n${n}`, op: "exists" as const }));
  assert.equal(
    wordsFor({ body: "{}" }, { json }),
    "JSON /n1 was missing; JSON /n2 was missing; JSON /n3 was missing; and 2 more",
  );
});

const GET = { method: "GET", headers: {}, body: null, latency: null, expect: null };

Deno.test("failure words: a timeout, a refused connection, a blocked address, for real", async () => {
  const hang = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await hang.promise;
    return new Response("late");
  });
  try {
    const slow = await executeProbe(
      { ...GET, url: `http://127.0.0.1:${server.addr.port}/`, timeoutMs: 250 },
      { policy: LOOPBACK_ONLY, timeoutMs: 250 },
    );
    assert.equal(
      failureWords({ error: slow.error, failed_checks: slow.failedChecks }),
      "timed out after 0.25 s",
    );
  } finally {
    hang.resolve();
    await server.shutdown();
  }
  const refused = await executeProbe(
    { ...GET, url: `http://127.0.0.1:${closedPort()}/` },
    { policy: LOOPBACK_ONLY, timeoutMs: 1000, retryPauseMs: 1 },
  );
  assert.equal(
    failureWords({ error: refused.error, failed_checks: refused.failedChecks }),
    "connection refused",
  );
  const blocked = await executeProbe(
    { ...GET, url: "http://127.0.0.1:9/" },
    { policy: createNetworkPolicy(), timeoutMs: 1000 },
  );
  assert.equal(
    failureWords({ error: blocked.error, failed_checks: blocked.failedChecks }),
    "not run, blocked by the network policy: 127.0.0.1 is loopback (not in PROBE_ALLOW_NETWORKS)",
  );
});

Deno.test("failure words: errors said in words, unknown ones kept as they are", () => {
  assert.equal(errorWords("timeout after 5000 ms"), "timed out after 5 s");
  assert.equal(errorWords("HTTP 502"), "answered HTTP 502, expected a status below 400");
  assert.equal(errorWords("DNS: ENOTFOUND"), "host name could not be resolved (ENOTFOUND)");
  assert.equal(errorWords("DNS: no address"), "host name has no address");
  assert.equal(
    errorWords("TLS: CERT_HAS_EXPIRED"),
    "TLS handshake failed: certificate has expired (CERT_HAS_EXPIRED)",
  );
  assert.equal(
    errorWords("blocked: 10.0.0.5 is private (not in PROBE_ALLOW_NETWORKS)"),
    "not run, blocked by the network policy: 10.0.0.5 is private (not in PROBE_ALLOW_NETWORKS)",
  );
  assert.equal(errorWords("connection reset"), "connection reset");
  assert.equal(
    checkWords({ check: "json.7", expected: "something new", seen: "x" }),
    "JSON check 8 failed: expected something new, saw x",
  );
});
