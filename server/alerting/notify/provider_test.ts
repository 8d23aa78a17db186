import assert from "node:assert/strict";
import { httpVerdict, MAX_RETRY_AFTER_MS, retryAfterMs } from "./provider.ts";
import { PROVIDERS } from "./providers/mod.ts";
import { targetKinds } from "./providers/schema.ts";

const NOW = new Date("2030-01-01T00:00:00Z");
const answer = (status: number, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body: "",
});

Deno.test("httpVerdict: 2xx delivers, 429/5xx/3xx retry, other 4xx give up", () => {
  assert.deepEqual(httpVerdict(answer(204), NOW), { outcome: "delivered" });
  assert.deepEqual(httpVerdict(answer(500), NOW), { outcome: "retry", error: "HTTP 500" });
  assert.deepEqual(httpVerdict(answer(301), NOW), {
    outcome: "retry",
    error: "redirect not followed",
  });
  assert.deepEqual(httpVerdict(answer(429, { "retry-after": "30" }), NOW), {
    outcome: "retry",
    error: "HTTP 429",
    retryAfterMs: 30_000,
  });
  for (const status of [400, 401, 403, 404, 410, 422]) {
    assert.deepEqual(httpVerdict(answer(status), NOW), {
      outcome: "give_up",
      error: `HTTP ${status}`,
    });
  }
});

Deno.test("retryAfterMs: seconds or an HTTP date, bounded, nothing for garbage", () => {
  assert.equal(retryAfterMs("120", NOW), 120_000);
  assert.equal(retryAfterMs("Tue, 01 Jan 2030 00:01:00 GMT", NOW), 60_000);
  assert.equal(retryAfterMs("Mon, 31 Dec 2029 23:00:00 GMT", NOW), 0, "a time passed: now");
  assert.equal(retryAfterMs("999999", NOW), MAX_RETRY_AFTER_MS);
  assert.equal(retryAfterMs("soon", NOW), undefined);
  assert.equal(retryAfterMs(undefined, NOW), undefined);
});

Deno.test("the registry: kinds are unique, and each lists its fields for the dashboard's form", () => {
  const kinds = PROVIDERS.map((p) => p.kind);
  assert.equal(new Set(kinds).size, kinds.length);
  assert.deepEqual(kinds.slice(0, 4), ["webhook", "slack", "discord", "mail"]);
  const slack = targetKinds().find((k) => k.kind === "slack");
  assert.deepEqual(slack?.fields, [{
    name: "url",
    label: "URL",
    input: "url",
    required: true,
    secret: true,
    generated: false,
    help: "The incoming webhook URL from Slack (https://hooks.slack.com/services/…). It is the " +
      "credential: after saving, only its host is shown.",
    default: null,
  }]);
  const webhook = targetKinds().find((k) => k.kind === "webhook");
  assert.deepEqual(webhook?.fields.map((f) => [f.name, f.required, f.secret]), [
    ["url", true, false],
    ["secret", false, true],
  ]);
});
