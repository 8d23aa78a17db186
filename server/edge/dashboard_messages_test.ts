/**
 * The dashboard's sentences for the API's validation messages, checked against the messages the
 * API really answers: each case sends a bad value through the real handler and reads `details`.
 */
import assert from "node:assert/strict";
import { apiSuite, uniqueName } from "../testing/app.ts";
import { detailSentence, fieldWords, sentence } from "../ui/messages.js";

Deno.test("validator messages read as sentences; unknown ones keep their words", () => {
  const cases: [string, string][] = [
    ["Too small: expected number to be >=1", "Must be at least 1"],
    ["Too small: expected number to be >0", "Must be more than 0"],
    ["Too big: expected number to be <=599", "Must be at most 599"],
    ["Too small: expected string to have >=1 characters", "Must not be empty"],
    ["Too small: expected string to have >=3 characters", "Must be at least 3 characters long"],
    ["Too big: expected string to have <=200 characters", "Must be at most 200 characters long"],
    ["Too small: expected array to have >=1 items", "Must have at least one entry"],
    ["Too big: expected array to have <=20 items", "Must have at most 20 entries"],
    ["Invalid input: expected number, received string", "Must be a number"],
    ["Invalid input: expected int, received number", "Must be a whole number"],
    ["Invalid input: expected string, received undefined", "Is required"],
    ['Invalid option: expected one of "eq"|"ne"|"exists"', "Must be one of eq, ne, exists"],
    ["Invalid URL", "Must be a valid URL"],
    ['Unrecognized key: "matches"', "matches is not a known field"],
    ["must not repeat a code or class", "Must not repeat a code or class"],
    ["is required with eq", "Is required with eq"],
  ];
  for (const [message, expected] of cases) assert.equal(sentence(message), expected, message);
});

Deno.test("a detail away from its field names the field in words", () => {
  assert.equal(fieldWords("interval_seconds"), "Interval");
  assert.equal(fieldWords("expect.json.1.value"), "Assertions, JSON check 2, value");
  assert.equal(fieldWords("headers.X-Trace"), "Headers, X-Trace");
  assert.equal(
    detailSentence({ path: "timeout_ms", message: "Too small: expected number to be >=100" }),
    "Timeout: must be at least 100",
  );
  assert.equal(
    detailSentence({ path: "", message: "is not a known field" }),
    "Is not a known field",
  );
});

apiSuite("the dashboard's sentences for the API's own messages", (test) => {
  test("what the API answers for bad probe fields reads as a sentence", async ({ api }) => {
    const project = uniqueName("msg");
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const res = await api.post(`/api/v1/projects/${project}/probes`, {
      url: "https://messages.example.test/",
      interval_seconds: 1,
      label: "",
      expect: { status: ["2xx", "2xx"], json: [{ path: "/a", op: "gt", value: "x" }] },
    });
    assert.equal(res.status, 422, res.text);
    const byPath = Object.fromEntries(
      res.body.error.details.map((d: { path: string; message: string }) => [d.path, d]),
    );
    assert.equal(sentence(byPath.interval_seconds.message), "Must be at least 10");
    assert.equal(sentence(byPath.label.message), "Must not be empty");
    assert.equal(
      detailSentence(byPath["expect.status.1"]),
      "Assertions, status codes 2: must not repeat a code or class",
    );
    assert.equal(
      detailSentence(byPath["expect.json.0.value"]),
      'Assertions, JSON check 1, value: must be a number to use "is greater than"',
    );
    // Every message the API sent comes out starting with a capital, none in zod's words, and
    // none in the API's field or operator names.
    for (const detail of res.body.error.details) {
      const text = sentence(detail.message);
      assert.match(text, /^[A-Z]/, text);
      assert.doesNotMatch(text, /expected \w+ to (be|have)/, text);
      assert.doesNotMatch(text, /with (gt|lt|ge|le)\b/, text);
    }
  });

  test("maintenance, policy and locations refusals read in the form's words", async ({ api }) => {
    const project = uniqueName("msg");
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const window = (body: Record<string, unknown>) =>
      api.post(`/api/v1/projects/${project}/maintenance`, body);
    const before = await window({
      starts_at: "2031-03-01T08:00:00Z",
      ends_at: "2031-03-01T07:00:00Z",
    });
    assert.equal(before.status, 422, before.text);
    assert.equal(sentence(before.body.error.details[0].message), "Must be after the start");
    const long = await window({
      starts_at: "2031-03-01T08:00:00Z",
      ends_at: "2033-03-01T08:00:00Z",
    });
    assert.equal(long.status, 422, long.text);
    assert.equal(
      sentence(long.body.error.details[0].message),
      "Must end at most 366 days after the start",
    );
    const policy = await api.patch("/api/v1/settings/alerts", { targets: [] });
    assert.equal(policy.status, 422, policy.text);
    assert.equal(
      sentence(policy.body.error.details[0].message),
      "Choose at least one target, or untick Send notifications to notify nobody",
    );
    const nowhere = await api.patch(`/api/v1/projects/${project}`, {
      default_locations: ["local", "mars"],
    });
    assert.equal(nowhere.status, 422, nowhere.text);
    const [detail] = nowhere.body.error.details;
    assert.equal(detail.path, "default_locations.1");
    // Beside the field: the entry, counted from 1, and the name, in words.
    assert.equal(
      detailSentence({ path: "1", message: detail.message }),
      'Entry 2: there is no location named "mars" (see Locations)',
    );
  });
});
