/**
 * The assertions form's state to `expect` and back, checked against the API: what the form makes
 * is accepted as it is and read back the same; the API's messages land on the part they name.
 */
import assert from "node:assert/strict";
import type { ProbeExpect } from "@probe/shared";
import { apiSuite, uniqueName } from "../testing/app.ts";
import { assertionErrors, assertionLines, assertionsState, expectOf } from "../ui/assertions.js";
import { checkName } from "../ui/check_words.js";
import { evaluate } from "../runner/assertions.ts";

const FULL: ProbeExpect = {
  status: ["2xx", 301],
  body: { contains: ["ok"], not_contains: ["maintenance"] },
  json: [
    { path: "/status", op: "eq", value: "UP" },
    { path: "/count", op: "lt", value: 250 },
    { path: "/flag", op: "eq", value: true },
    { path: "/gone", op: "eq", value: null },
    { path: "/errors", op: "not_exists" },
  ],
  headers: [
    { name: "Content-Type", op: "contains", value: "json" },
    { name: "X-Trace", op: "exists" },
  ],
  certificate_days: 14,
};

Deno.test("an expect survives the form: state and back give the same object", () => {
  assert.deepEqual(expectOf(assertionsState(FULL)), FULL);
  assert.equal(expectOf(assertionsState(null)), null, "an empty form is the default rule");
});

Deno.test("typed fields become the API's values", () => {
  const state = assertionsState(null);
  state.status = " 200, 2XX,301 ";
  state.contains = "ok\n\n  ready  \n";
  state.json = [
    { path: "/n", op: "ge", type: "text", value: "10" }, // an order check is always a number
    { path: "/s", op: "eq", type: "text", value: "10" }, // text stays text
    { path: "/e", op: "exists", type: "text", value: "ignored" }, // no value with exists
  ];
  state.headers = [{ name: " Server ", op: "not_exists", value: "ignored" }];
  state.certificate_days = "30";
  assert.deepEqual(expectOf(state), {
    status: [200, "2xx", 301],
    body: { contains: ["ok", "ready"] },
    json: [
      { path: "/n", op: "ge", value: 10 },
      { path: "/s", op: "eq", value: "10" },
      { path: "/e", op: "exists" },
    ],
    headers: [{ name: "Server", op: "not_exists" }],
    certificate_days: 30,
  });
});

Deno.test("assertions read as lines", () => {
  assert.deepEqual(assertionLines(FULL), [
    "Status is one of 2xx, 301",
    'Body contains "ok"',
    'Body does not contain "maintenance"',
    'JSON /status equals "UP"',
    "JSON /count is less than 250",
    "JSON /flag equals true",
    "JSON /gone equals null",
    "JSON /errors does not exist",
    'Header Content-Type contains "json"',
    "Header X-Trace is present",
    "TLS certificate valid for at least 14 more days",
  ]);
  assert.deepEqual(assertionLines({ json: [{ path: "", op: "exists" }] }), [
    "Status is below 400 (the default)",
    "The whole JSON body exists",
  ]);
  assert.deepEqual(assertionLines({ status: [200] }), ["Status is 200"]);
});

apiSuite("the assertions form against the API", (test) => {
  test("what the form makes is stored as made, and the API's messages find their part", async ({ api }) => {
    const project = uniqueName("af");
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const made = expectOf(assertionsState(FULL));
    const created = await api.post(`/api/v1/projects/${project}/probes`, {
      url: "https://assertions.example.test/",
      expect: made,
    });
    assert.equal(created.status, 201, created.text);
    const read = await api.get(
      `/api/v1/projects/${project}/probes/${created.body.data.probe_id}`,
    );
    assert.deepEqual(read.body.data.expect, FULL);
    assert.deepEqual(assertionsState(read.body.data.expect), assertionsState(FULL));

    const state = assertionsState(FULL);
    state.status = "2xx, 999";
    state.json = [{ path: "status", op: "lt", type: "text", value: "high" }];
    state.headers = [{ name: "Bad Name", op: "eq", value: "" }];
    const refused = await api.post(`/api/v1/projects/${project}/probes`, {
      url: "http://assertions.example.test/",
      expect: expectOf(state),
    });
    assert.equal(refused.status, 422, refused.text);
    const below = refused.body.error.details
      .filter((d: { path: string }) => d.path.startsWith("expect."))
      .map((d: { path: string; message: string }) => ({
        path: d.path.slice("expect.".length),
        message: d.message,
      }));
    const errors = assertionErrors(below);
    assert.match(errors.status, /^Entry 2: /);
    assert.match(errors["json.0.path"], /JSON Pointer/);
    assert.match(errors["json.0.value"], /^Must be a number/);
    assert.match(errors["headers.0.name"], /HTTP tokens/);
    // certificate_days on an http URL.
    assert.match(errors.certificate_days, /https/);
  });
});

Deno.test("every check a run can fail is named in the form's words beside its code", () => {
  // A response that fails every assertion of FULL: the runner's own evaluation names them.
  const failed = evaluate(FULL, {
    status: 503,
    headers: { "content-type": "text/html" },
    body: '{"status":"DOWN","count":900,"flag":false,"gone":1,"errors":[1]} maintenance',
    certificate: { validTo: new Date(Date.UTC(2026, 0, 2)) },
    now: Date.UTC(2026, 0, 1),
  });
  assert.deepEqual(
    failed.map((f) => `${checkName(f.check)} (${f.check})`),
    [
      "Status code (status)",
      "Body must contain, entry 1 (body.contains.0)",
      "Body must not contain, entry 1 (body.not_contains.0)",
      "JSON check 1 (json.0)",
      "JSON check 2 (json.1)",
      "JSON check 3 (json.2)",
      "JSON check 4 (json.3)",
      "JSON check 5 (json.4)",
      "Header check 1 (headers.0)",
      "Header check 2 (headers.1)",
      "Certificate days (certificate_days)",
    ],
  );
  assert.equal(checkName("json.x"), "json.x", "a name it does not know stays as it is");
});
