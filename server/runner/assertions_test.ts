import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type FailedCheck,
  isSecretHeader,
  type ProbeExpect,
  probeExpect,
  REDACTED,
} from "@probe/shared";
import {
  evaluate,
  jsonPreview,
  MAX_BODY_EXCERPT,
  MAX_JSON_DEPTH,
  needsBody,
  nestsAtMost,
  type Observed,
  parseJsonBody,
  pointerTokens,
  resolvePointer,
  truncate,
} from "./assertions.ts";

const NOW = Date.UTC(2026, 10, 22);
const DAY = 24 * 60 * 60 * 1000;

function observed(over: Partial<Observed> = {}): Observed {
  return { status: 200, headers: {}, body: null, certificate: null, now: NOW, ...over };
}

/** Parsed as the API parses it, so that every expect here is one the service would store. */
const expect = (value: unknown): ProbeExpect => probeExpect.parse(value);

const checks = (failed: FailedCheck[]) => failed.map((f) => f.check);

// As text: an object literal would make `__proto__` the prototype, not a key.
const DOCUMENT = `{"status":"UP","count":3,"ratio":0.5,"ok":true,"nothing":null,
  "tags":["blue","green",7,null],"nested":{"list":[{"id":"first"},{"id":"second"}]},
  "a/b":{"m~n":"escaped"},"":"empty key"," ":"space key","__proto__":{"polluted":"no"},
  "version":"1.10.0"}`;

Deno.test("status lists match codes and classes; without one, below 400 passes", () => {
  const table: [unknown, number, boolean][] = [
    [[200], 200, true],
    [[200, 204], 204, true],
    [[200], 201, false],
    [["2xx"], 299, true],
    [["2xx"], 300, false],
    [["2xx", 301], 301, true],
    [["4xx"], 404, true],
    [[503], 503, true],
    [["1xx", "3xx"], 500, false],
  ];
  for (const [status, seen, passes] of table) {
    const failed = evaluate(expect({ status }), observed({ status: seen }));
    assert.equal(failed.length === 0, passes, `${JSON.stringify(status)} against ${seen}`);
    if (!passes) {
      assert.deepEqual(failed, [{
        check: "status",
        expected: `one of ${(status as unknown[]).join(", ")}`,
        seen: String(seen),
      }]);
    }
  }
  assert.deepEqual(evaluate(expect({}), observed({ status: 399 })), []);
  assert.deepEqual(evaluate(expect({}), observed({ status: 400 })), [
    { check: "status", expected: "below 400", seen: "400" },
  ]);
  // A status list replaces the default rule: a 500 can be what is expected.
  assert.deepEqual(evaluate(expect({ status: ["5xx"] }), observed({ status: 500 })), []);
});

Deno.test("body strings: contains and not_contains, each reported by its index", () => {
  const e = expect({ body: { contains: ["ready", "missing", "db: ok"], not_contains: ["error"] } });
  const failed = evaluate(e, observed({ body: "service ready; db: ok" }));
  assert.deepEqual(failed, [{
    check: "body.contains.1",
    expected: 'body contains "missing"',
    seen: "service ready; db: ok",
  }]);
  const bad = evaluate(e, observed({ body: "ready, missing db: ok, but error 42" }));
  assert.deepEqual(checks(bad), ["body.not_contains.0"]);
  assert.equal(bad[0].expected, 'body does not contain "error"');
  assert.match(bad[0].seen!, /error 42/);
  // A body that was not read (or is empty) contains nothing.
  assert.deepEqual(
    checks(evaluate(e, observed({ body: null }))),
    ["body.contains.0", "body.contains.1", "body.contains.2"],
  );
  assert.equal(evaluate(e, observed({ body: "" }))[0].seen, "empty body");
});

Deno.test("body excerpts are at most 80 characters: the start, or around what was found", () => {
  const long = "a".repeat(500) + "FORBIDDEN" + "b".repeat(500);
  const [missing] = evaluate(expect({ body: { contains: ["zzz"] } }), observed({ body: long }));
  assert.ok(missing.seen!.length <= MAX_BODY_EXCERPT);
  assert.ok(missing.seen!.startsWith("aaaa"));
  assert.ok(missing.seen!.endsWith("…"));
  const [found] = evaluate(
    expect({ body: { not_contains: ["FORBIDDEN"] } }),
    observed({ body: long }),
  );
  assert.ok(found.seen!.length <= MAX_BODY_EXCERPT, found.seen ?? "");
  assert.match(found.seen!, /^…a+FORBIDDENb+…$/);
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), fc.nat(400), (body, cut) => {
      const needle = Array.from(body).slice(cut, cut + 5).join("");
      const e = needle
        ? expect({ body: { contains: ["\u2603never"], not_contains: [needle] } })
        : expect({ body: { contains: ["\u2603never"] } });
      for (const f of evaluate(e, observed({ body }))) {
        assert.ok(f.seen!.length <= MAX_BODY_EXCERPT);
        assert.ok(!/\p{Cs}/u.test(f.seen!), "no lone surrogate in an excerpt");
      }
    }),
  );
});

Deno.test("JSON pointers: escapes, array indexes, the empty pointer and missing paths", () => {
  const doc = JSON.parse(DOCUMENT);
  assert.deepEqual(pointerTokens(""), []);
  assert.deepEqual(pointerTokens("/a~1b/m~0n"), ["a/b", "m~n"]);
  // `~01` is `~1` (the literal), not `/`: `~1` is replaced first.
  assert.deepEqual(pointerTokens("/~01"), ["~1"]);
  assert.equal(resolvePointer(doc, "/a~1b/m~0n"), "escaped");
  assert.equal(resolvePointer(doc, "/"), "empty key");
  assert.equal(resolvePointer(doc, "/ "), "space key");
  assert.equal(resolvePointer(doc, "/nested/list/1/id"), "second");
  assert.equal(resolvePointer(doc, "/tags/0"), "blue");
  assert.deepEqual(resolvePointer(doc, ""), doc);
  assert.deepEqual(resolvePointer(doc, "/__proto__"), { polluted: "no" });
  for (const missing of ["/nope", "/tags/4", "/tags/-", "/tags/01", "/tags/+1", "/status/x"]) {
    assert.equal(typeof resolvePointer(doc, missing), "symbol", missing);
  }
  // Inherited names are not members.
  assert.equal(typeof resolvePointer({}, "/constructor"), "symbol");
  assert.equal(typeof resolvePointer({}, "/toString"), "symbol");
});

Deno.test("every JSON op, on every kind of value", () => {
  // [path, op, value, passes]
  const table: [string, string, unknown, boolean][] = [
    ["/status", "eq", "UP", true],
    ["/status", "eq", "up", false],
    ["/count", "eq", 3, true],
    ["/count", "eq", "3", false],
    ["/ok", "eq", true, true],
    ["/nothing", "eq", null, true],
    ["/nested", "eq", null, false],
    ["/status", "ne", "DOWN", true],
    ["/status", "ne", "UP", false],
    ["/count", "ne", "3", true],
    ["/nested", "ne", "x", true],
    ["/count", "lt", 4, true],
    ["/count", "lt", 3, false],
    ["/count", "le", 3, true],
    ["/count", "le", 2.9, false],
    ["/count", "gt", 2, true],
    ["/count", "gt", 3, false],
    ["/ratio", "ge", 0.5, true],
    ["/ratio", "ge", 0.51, false],
    // Order ops compare numbers only: a numeric string is not a number.
    ["/version", "gt", 1, false],
    ["/status", "lt", 10, false],
    ["/status", "contains", "U", true],
    ["/status", "contains", "X", false],
    ["/tags", "contains", "green", true],
    ["/tags", "contains", 7, true],
    ["/tags", "contains", null, true],
    ["/tags", "contains", "gre", false],
    ["/tags", "contains", "7", false],
    ["/count", "contains", 3, false],
    ["/nested/list", "contains", "first", false],
    ["/status", "exists", undefined, true],
    ["/nothing", "exists", undefined, true],
    ["/nope", "exists", undefined, false],
    ["/nope", "not_exists", undefined, true],
    ["/nothing", "not_exists", undefined, false],
    // A missing path fails every comparison, `ne` included.
    ["/nope", "eq", "x", false],
    ["/nope", "ne", "x", false],
    ["/nope", "lt", 1, false],
    ["/nope", "contains", "x", false],
  ];
  for (const [path, op, value, passes] of table) {
    const item = value === undefined ? { path, op } : { path, op, value };
    const failed = evaluate(expect({ json: [item] }), observed({ body: DOCUMENT }));
    assert.equal(failed.length === 0, passes, JSON.stringify(item));
    if (!passes) assert.equal(failed[0].check, "json.0");
  }
});

Deno.test("JSON failures say what was expected and what was seen", () => {
  const e = expect({
    json: [
      { path: "/status", op: "eq", value: "DOWN" },
      { path: "/nope", op: "exists" },
      { path: "/count", op: "lt", value: 1 },
      { path: "/nothing", op: "not_exists" },
      { path: "", op: "eq", value: 1 },
    ],
  });
  assert.deepEqual(evaluate(e, observed({ body: DOCUMENT })), [
    { check: "json.0", expected: '/status eq "DOWN"', seen: '"UP"' },
    { check: "json.1", expected: "/nope exists", seen: "missing" },
    { check: "json.2", expected: "/count lt 1", seen: "3" },
    { check: "json.3", expected: "/nothing not_exists", seen: "null" },
    {
      check: "json.4",
      expected: "(root) eq 1",
      seen: truncate(JSON.stringify(JSON.parse(DOCUMENT)), MAX_BODY_EXCERPT),
    },
  ]);
});

Deno.test("a body that is not JSON fails every JSON check, not_exists included", () => {
  const e = expect({
    json: [{ path: "/a", op: "not_exists" }, { path: "", op: "exists" }],
    body: { contains: ["{"] },
  });
  for (const body of ["<html>{</html>", '{"a": 1', "", null]) {
    const failed = evaluate(e, observed({ body }));
    const json = failed.filter((f) => f.check.startsWith("json."));
    assert.deepEqual(json.map((f) => f.seen), ["body is not JSON", "body is not JSON"]);
  }
  // A body cut at 1 MiB in the middle of a document is not JSON either.
  const cut = JSON.stringify({ pad: "x".repeat(100) }).slice(0, 50);
  assert.equal(evaluate(e, observed({ body: cut }))[0].seen, "body is not JSON");
});

Deno.test("header names match ignoring case; every header op", () => {
  const headers = { "content-type": "application/json; charset=utf-8", "x-version": "1.2.3" };
  const table: [unknown, boolean][] = [
    [{ name: "Content-Type", op: "contains", value: "json" }, true],
    [{ name: "CONTENT-TYPE", op: "contains", value: "JSON" }, false],
    [{ name: "x-version", op: "eq", value: "1.2.3" }, true],
    [{ name: "X-Version", op: "eq", value: "1.2" }, false],
    [{ name: "X-VERSION", op: "exists" }, true],
    [{ name: "x-missing", op: "exists" }, false],
    [{ name: "x-missing", op: "not_exists" }, true],
    [{ name: "X-Version", op: "not_exists" }, false],
    [{ name: "x-missing", op: "eq", value: "" }, false],
    [{ name: "x-missing", op: "contains", value: "a" }, false],
    // Inherited names are not headers.
    [{ name: "constructor", op: "exists" }, false],
  ];
  for (const [item, passes] of table) {
    const failed = evaluate(expect({ headers: [item] }), observed({ headers }));
    assert.equal(failed.length === 0, passes, JSON.stringify(item));
  }
  assert.deepEqual(
    evaluate(
      expect({
        headers: [{ name: "X-Version", op: "eq", value: "2" }, { name: "X-No", op: "exists" }],
      }),
      observed({ headers }),
    ),
    [
      { check: "headers.0", expected: 'x-version eq "2"', seen: "1.2.3" },
      { check: "headers.1", expected: "x-no exists", seen: "missing" },
    ],
  );
});

Deno.test("values of credential-like headers are never shown, expected or seen", () => {
  for (
    const name of [
      "Authorization",
      "proxy-authorization",
      "Cookie",
      "Set-Cookie",
      "X-Auth-Token",
      "x-api-key",
      "X-Session-Id",
      "x-client-secret",
      "WWW-Authenticate",
    ]
  ) {
    assert.ok(isSecretHeader(name), name);
    const headers = { [name.toLowerCase()]: "s3cret-value" };
    const failed = evaluate(
      expect({
        headers: [
          { name, op: "eq", value: "other-s3cret" },
          { name, op: "contains", value: "zzz" },
          { name, op: "not_exists" },
        ],
      }),
      observed({ headers }),
    );
    assert.equal(failed.length, 3);
    const text = JSON.stringify(failed);
    assert.ok(!text.includes("s3cret"), text);
    assert.deepEqual(failed.map((f) => f.seen), [REDACTED, REDACTED, REDACTED]);
    assert.equal(failed[0].expected, `${name.toLowerCase()} eq ${REDACTED}`);
  }
  for (const name of ["content-type", "x-version", "etag", "keep-alive"]) {
    assert.ok(!isSecretHeader(name), name);
  }
});

Deno.test("seen is at most 200 characters, with no control characters", () => {
  const value = "v".repeat(1000);
  const [failed] = evaluate(
    expect({ headers: [{ name: "x-long", op: "eq", value: "short" }] }),
    observed({ headers: { "x-long": value } }),
  );
  assert.equal(failed.seen!.length, 200);
  assert.ok(failed.seen!.endsWith("…"));
  const [nul] = evaluate(
    expect({ body: { contains: ["x"] } }),
    observed({ body: "a\u0000b\u001bc\r\nd\te" }),
  );
  assert.equal(nul.seen, "a\ufffdb\ufffdc  d e");
  // A cut never splits a surrogate pair.
  assert.equal(truncate("a".repeat(198) + "😀😀", 200), "a".repeat(198) + "…");
  assert.equal(truncate("a".repeat(197) + "😀😀", 200), "a".repeat(197) + "😀…");
  assert.equal(truncate("short"), "short");
  fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 600 }), (s) => {
    const t = truncate(s);
    assert.ok(t.length <= 200);
    assert.ok(!/\p{Cs}/u.test(t) || /\p{Cs}/u.test(s), "truncation adds no lone surrogate");
  }));
});

Deno.test("the certificate must stay valid the given number of days, on the final hop", () => {
  const e = expect({ certificate_days: 30 });
  const validTo = new Date(NOW + 30 * DAY);
  assert.deepEqual(evaluate(e, observed({ certificate: { validTo } })), []);
  const short = new Date(NOW + 30 * DAY - 1);
  assert.deepEqual(evaluate(e, observed({ certificate: { validTo: short } })), [{
    check: "certificate_days",
    expected: "certificate valid for at least 30 more days",
    seen: `expires on ${short.toISOString()}, in 29 days`,
  }]);
  const expired = new Date(NOW - DAY);
  assert.match(
    evaluate(e, observed({ certificate: { validTo: expired } }))[0].seen!,
    /^expired on /,
  );
  assert.equal(
    evaluate(e, observed({ certificate: null }))[0].seen,
    "no certificate: the final hop was http",
  );
  assert.equal(
    evaluate(e, observed({ certificate: { validTo: null } }))[0].seen,
    "the certificate could not be read",
  );
});

Deno.test("checks come in the order of expect's fields, all of them evaluated", () => {
  const e = expect({
    status: [204],
    body: { contains: ["a"], not_contains: ["b"] },
    json: [{ path: "/x", op: "exists" }],
    headers: [{ name: "x", op: "exists" }],
    certificate_days: 1,
  });
  assert.deepEqual(checks(evaluate(e, observed({ status: 200, body: "b" }))), [
    "status",
    "body.contains.0",
    "body.not_contains.0",
    "json.0",
    "headers.0",
    "certificate_days",
  ]);
  assert.deepEqual(
    evaluate(
      e,
      observed({
        status: 204,
        body: '{"x":"a"}',
        headers: { x: "" },
        certificate: { validTo: new Date(NOW + 2 * DAY) },
      }),
    ),
    [],
  );
});

Deno.test("the body is read only for body and JSON assertions", () => {
  assert.equal(needsBody(null), false);
  assert.equal(needsBody(expect({})), false);
  assert.equal(needsBody(expect({ status: [200], headers: [{ name: "a", op: "exists" }] })), false);
  assert.equal(needsBody(expect({ body: {} })), false);
  assert.equal(needsBody(expect({ body: { not_contains: ["x"] } })), true);
  assert.equal(needsBody(expect({ json: [{ path: "", op: "exists" }] })), true);
});

Deno.test("JSON nested deeper than the limit is not parsed: every json check fails, saying so", () => {
  const e = expect({
    json: [{ path: "", op: "exists" }, { path: "/a", op: "not_exists" }],
    body: { contains: ["[[["] },
  });
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  const seen = `JSON nested deeper than ${MAX_JSON_DEPTH} levels: not parsed`;
  for (const body of [deep(MAX_JSON_DEPTH + 1), deep(500_000), `{"a":${deep(MAX_JSON_DEPTH)}}`]) {
    const failed = evaluate(e, observed({ body }));
    assert.deepEqual(failed.map((f) => [f.check, f.seen]), [["json.0", seen], ["json.1", seen]]);
  }
  // At the limit it is parsed; brackets inside strings, escaped quotes included, do not count.
  assert.deepEqual(evaluate(e, observed({ body: deep(MAX_JSON_DEPTH) })), []);
  const inString = JSON.stringify({ s: `\\"${"[".repeat(1000)}` });
  assert.deepEqual(
    evaluate(
      expect({ json: [{ path: "/s", op: "contains", value: "[[" }] }),
      observed({ body: inString }),
    ),
    [],
  );
  assert.equal(nestsAtMost(deep(3), 3), true);
  assert.equal(nestsAtMost(deep(4), 3), false);
  assert.equal(nestsAtMost('["]]]]", [[]]]', 3), true);
  assert.equal(nestsAtMost('["\\"[[[[", [[[[]]]]]', 3), false);
  assert.deepEqual(parseJsonBody(deep(500_000)), { ok: false, seen });
});

Deno.test("the body is parsed once per run: the checks read the parsed value they are given", () => {
  const e = expect({ json: [{ path: "/a", op: "eq", value: 1 }, { path: "/b", op: "exists" }] });
  // `json` given: the text is not parsed again (it is not even JSON here).
  const json = parseJsonBody('{"a":1,"b":null}');
  assert.deepEqual(evaluate(e, observed({ body: "not json", json })), []);
  assert.deepEqual(
    evaluate(e, observed({ body: '{"a":1,"b":2}', json: parseJsonBody("[]") })).map((f) => f.seen),
    ["missing", "missing"],
  );
});

Deno.test("seen for a large JSON value is a bounded rendering, not the whole value serialised", () => {
  const big = { list: Array.from({ length: 200_000 }, (_, i) => ({ i, s: "x".repeat(20) })) };
  const [failed] = evaluate(
    expect({ json: [{ path: "", op: "eq", value: 1 }] }),
    observed({ json: { ok: true, value: big }, body: null }),
  );
  assert.equal(failed.seen, truncate(JSON.stringify(big).slice(0, 200), MAX_BODY_EXCERPT));
  // The rendering agrees with JSON.stringify wherever that fits.
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), fc.nat(120), (value, max) => {
    const whole = JSON.stringify(value);
    const preview = jsonPreview(value, max);
    if (whole.length <= max) assert.equal(preview, whole);
    else assert.equal(preview, whole.slice(0, max + 1));
  }));
});
