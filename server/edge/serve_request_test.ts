import assert from "node:assert/strict";
import fc from "fast-check";
import { BodilessRequest, RawHeaders } from "./serve_request.ts";

/** Header names as a parser hands them over: tokens in any case, some of them repeated. */
const name = fc.constantFrom(
  "Host",
  "host",
  "X-Service-Api-Key",
  "x-service-api-key",
  "User-Agent",
  "Set-Cookie",
  "set-cookie",
  "Accept",
  "X-Forwarded-For",
  "x-a",
  "X-A",
);
/** Values as a parser hands them over: trimmed, no control characters, Latin-1 allowed. */
const value = fc.string({ unit: fc.constantFrom("a", "b", " ", ",", ";", "=", "é", "1", "\t") })
  .map((text) => text.trim());
const rawHeaders = fc.array(fc.tuple(name, value), { maxLength: 8 }).map((pairs) => pairs.flat());
/** Names asked for: those above, in another case, missing ones, and names that are not tokens. */
const asked = fc.oneof(name, fc.constantFrom("HOST", "missing", "x(a)", "", "x a", "é"));
/** A change to the headers, as `Headers` takes it. */
const change = fc.oneof(
  fc.tuple(fc.constant("set" as const), asked, value),
  fc.tuple(fc.constant("append" as const), asked, value),
  fc.tuple(fc.constant("delete" as const), asked, fc.constant("")),
);

/** What `fn` answers, or the kind of error it throws. */
function outcome<T>(fn: () => T): T | string {
  try {
    return fn();
  } catch (error) {
    return `throws ${(error as Error).name}`;
  }
}

/** The pairs Deno's side is made from; written here, not imported, so that it checks ours. */
function pairsOf(raw: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]]);
  return pairs;
}

/** Everything a reader can learn of `headers` by name and by iterating. */
function readings(headers: Headers, names: string[]) {
  const forEach: string[][] = [];
  headers.forEach((v, k, parent) => forEach.push([k, v, String(parent === headers)]));
  return {
    get: names.map((n) => outcome(() => headers.get(n))),
    has: names.map((n) => outcome(() => headers.has(n))),
    entries: [...headers.entries()],
    iterated: [...headers],
    keys: [...headers.keys()],
    values: [...headers.values()],
    forEach,
    setCookies: headers.getSetCookie(),
  };
}

Deno.test("raw headers read and change as Deno's Headers made from the same pairs", () => {
  fc.assert(
    fc.property(rawHeaders, fc.array(asked, { maxLength: 6 }), fc.array(change, { maxLength: 4 }), (
      raw,
      names,
      changes,
    ) => {
      const ours = new RawHeaders(raw);
      const deno = new Headers(pairsOf(raw));
      assert.deepEqual(readings(ours, names), readings(deno, names));
      for (const [verb, n, v] of changes) {
        const a = outcome(() => verb === "delete" ? ours.delete(n) : ours[verb](n, v));
        const b = outcome(() => verb === "delete" ? deno.delete(n) : deno[verb](n, v));
        assert.deepEqual(a, b);
        assert.deepEqual(readings(ours, names), readings(deno, names));
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("a bodiless request reads as the Request made with new Request", async () => {
  const raw = ["Host", "a:8000", "X-Service-Api-Key", "k", "x-service-api-key", "k2"];
  for (const method of ["GET", "HEAD", "DELETE", "OPTIONS"]) {
    const url = "http://a:8000/api/v1/projects/p?x=%20y";
    const ours = new BodilessRequest(url, method, raw);
    const deno = new Request(url, { method, headers: pairsOf(raw) });
    for (
      const field of [
        "url",
        "method",
        "body",
        "bodyUsed",
        "cache",
        "credentials",
        "destination",
        "integrity",
        "isHistoryNavigation",
        "isReloadNavigation",
        "keepalive",
        "mode",
        "redirect",
        "referrer",
        "referrerPolicy",
      ] as const
    ) assert.deepEqual(ours[field], deno[field], field);
    assert.deepEqual([...ours.headers], [...deno.headers]);
    assert.equal(ours.headers.get("X-SERVICE-API-KEY"), "k, k2");
    assert.equal(ours.signal.aborted, false);
    assert.equal(await ours.text(), await deno.text());
    assert.equal(ours.bodyUsed, false);
    assert.deepEqual(await ours.bytes(), await deno.bytes());
    assert.deepEqual(await ours.arrayBuffer(), await deno.arrayBuffer());
    assert.equal((await ours.blob()).size, 0);
    await assert.rejects(ours.json(), SyntaxError);
  }
});

Deno.test("a bodiless request's clone has its headers as they are, and its signal follows", () => {
  const ours = new BodilessRequest("http://a/x", "GET", ["X-A", "1"]);
  ours.headers.set("x-b", "2");
  const copy = ours.clone();
  assert.ok(copy instanceof Request);
  assert.equal(copy.url, "http://a/x");
  assert.deepEqual([...copy.headers], [["x-a", "1"], ["x-b", "2"]]);
  assert.equal(copy.signal.aborted, false);
});
